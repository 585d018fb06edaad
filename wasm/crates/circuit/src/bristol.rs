//! Bristol Fashion text: parser and writer.
//!
//! ```text
//! <gates> <wires>
//! <n inputs> <bits of input 1> ...
//! <n outputs> <bits of output 1> ...
//!
//! 2 1 <a> <b> <out> XOR|AND
//! 1 1 <a> <out> INV|EQW
//! 1 1 <0|1> <out> EQ
//! <2k> <k> <a1..ak> <b1..bk> <c1..ck> MAND
//! ```
//!
//! Blank lines are ignored anywhere (files differ in how many they put after the header and at
//! the end). `<gates>` counts lines, so a `MAND` line counts once however many ANDs it holds.

use crate::check::{total_bits, WireTracker};
use crate::error::{CircuitError, Location};
use crate::{Circuit, Gate, Limits, Wire};
use core::fmt::Write;

/// Non-blank lines with their 1-based numbers and the number of bytes after them.
struct Lines<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines { text, pos: 0, line: 0 }
    }

    /// The next line holding anything but whitespace, as its number and its tokens' source.
    fn next_nonblank(&mut self) -> Option<(usize, &'a str)> {
        while self.pos < self.text.len() {
            let rest = &self.text[self.pos..];
            let len = rest.find('\n').unwrap_or(rest.len());
            let line = &rest[..len];
            // Skip the newline too; at the end of the text there is none.
            self.pos += (len + 1).min(rest.len());
            self.line += 1;
            if !line.trim_ascii().is_empty() {
                return Some((self.line, line));
            }
        }
        None
    }

    /// Bytes not yet consumed.
    fn remaining(&self) -> usize {
        self.text.len() - self.pos
    }

    /// Number of the last line read (0 before any).
    fn last_line(&self) -> usize {
        self.line
    }
}

fn syntax(line: usize, msg: impl Into<String>) -> CircuitError {
    CircuitError::Syntax { at: Location::Line(line), msg: msg.into() }
}

fn bad_counts(line: usize, msg: impl Into<String>) -> CircuitError {
    CircuitError::BadCounts { at: Location::Line(line), msg: msg.into() }
}

/// A decimal number without sign, as Bristol writes them.
fn number(token: &str, line: usize) -> Result<u64, CircuitError> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(syntax(line, "expected a non-negative decimal number"));
    }
    token.parse::<u64>().map_err(|_| syntax(line, "number does not fit in 64 bits"))
}

fn wire_number(token: &str, line: usize) -> Result<Wire, CircuitError> {
    Wire::try_from(number(token, line)?).map_err(|_| syntax(line, "wire number does not fit in 32 bits"))
}

/// `<n> <w1> .. <wn>`: the value widths of an input or output header line.
fn widths(line: usize, text: &str, what: &'static str, limit: u32) -> Result<Vec<u32>, CircuitError> {
    let mut tokens = text.split_ascii_whitespace();
    let n = number(tokens.next().unwrap_or(""), line)?;
    if n > u64::from(limit) {
        return Err(CircuitError::TooLarge { at: Location::Line(line), what, limit: u64::from(limit) });
    }
    // Collected from the tokens actually present, so the vector is as large as the line, not n.
    let widths = tokens
        .map(|t| u32::try_from(number(t, line)?).map_err(|_| syntax(line, "value width does not fit in 32 bits")))
        .collect::<Result<Vec<u32>, _>>()?;
    if widths.len() as u64 != n {
        return Err(syntax(line, format!("declares {n} values but lists {} widths", widths.len())));
    }
    Ok(widths)
}

/// Parses a Bristol Fashion file; see the module docs.
pub(crate) fn parse(text: &str, limits: &Limits) -> Result<Circuit, CircuitError> {
    let mut lines = Lines::new(text);
    let end = |lines: &Lines| bad_counts(lines.last_line().max(1), "the file ends inside the header");

    let (l1, header) = lines.next_nonblank().ok_or_else(|| end(&lines))?;
    let counts: Vec<&str> = header.split_ascii_whitespace().take(3).collect();
    let [gates, wires] = counts[..] else {
        return Err(syntax(l1, "the first line must be '<gates> <wires>'"));
    };
    let declared_gates = number(gates, l1)?;
    let wires = number(wires, l1)?;
    if declared_gates > limits.max_gates {
        return Err(CircuitError::TooLarge { at: Location::Line(l1), what: "gate count", limit: limits.max_gates });
    }
    if wires > u64::from(limits.max_wires) {
        return Err(CircuitError::TooLarge {
            at: Location::Line(l1),
            what: "wire count",
            limit: u64::from(limits.max_wires),
        });
    }
    // Below max_wires, which is a u32.
    let wires = wires as u32;

    let (l2, line) = lines.next_nonblank().ok_or_else(|| end(&lines))?;
    let inputs = widths(l2, line, "number of input values", limits.max_values)?;
    let input_bits = total_bits(&inputs)
        .filter(|&bits| bits <= wires)
        .ok_or_else(|| bad_counts(l2, "input bits exceed the wire count"))?;

    let (l3, line) = lines.next_nonblank().ok_or_else(|| end(&lines))?;
    let outputs = widths(l3, line, "number of output values", limits.max_values)?;
    let output_bits = total_bits(&outputs)
        .filter(|&bits| bits <= wires)
        .ok_or_else(|| bad_counts(l3, "output bits exceed the wire count"))?;

    // Every non-input wire must be written by some gate, and each write takes at least two bytes
    // of text (a digit and a separator): a header claiming more is refused before the tracker
    // (one bit per non-input wire) is allocated.
    if u64::from(wires - input_bits) > lines.remaining() as u64 / 2 {
        return Err(bad_counts(l1, "the header declares more wires than the file can define"));
    }
    let mut tracker = WireTracker::new(wires, input_bits, true);

    let mut gates: Vec<Gate> = Vec::new();
    let mut tokens: Vec<&str> = Vec::new();
    for done in 0..declared_gates {
        let Some((ln, line)) = lines.next_nonblank() else {
            return Err(bad_counts(
                lines.last_line().max(1),
                format!("the file ends after {done} of {declared_gates} gates"),
            ));
        };
        tokens.clear();
        tokens.extend(line.split_ascii_whitespace());
        gate_line(ln, &tokens, &mut tracker, &mut gates)?;
        if gates.len() as u64 > limits.max_gates {
            return Err(CircuitError::TooLarge { at: Location::Line(ln), what: "gate count", limit: limits.max_gates });
        }
    }
    if let Some((ln, _)) = lines.next_nonblank() {
        return Err(CircuitError::TrailingData { at: Location::Line(ln) });
    }
    tracker.finish(output_bits, Location::Line(l3))?;
    if u64::from(wires - input_bits) > gates.len() as u64 {
        return Err(bad_counts(l1, "more non-input wires than gates to define them"));
    }
    Ok(Circuit { wires, inputs, outputs, gates })
}

/// Parses one gate line (already split into tokens), checks it, and appends its gates.
fn gate_line(line: usize, tokens: &[&str], tracker: &mut WireTracker, out: &mut Vec<Gate>) -> Result<(), CircuitError> {
    let [n_in, n_out, operands @ .., op] = tokens else {
        return Err(syntax(line, "a gate line needs '<inputs> <outputs> <wires...> <operation>'"));
    };
    let n_in = number(n_in, line)?;
    let n_out = number(n_out, line)?;
    if n_in.checked_add(n_out) != Some(operands.len() as u64) {
        return Err(syntax(line, format!("declares {n_in}+{n_out} wires but lists {}", operands.len())));
    }
    let at = Location::Line(line);
    let w = |i: usize| wire_number(operands[i], line);
    let arity = |name: &str, want_in: u64, want_out: u64| {
        if (n_in, n_out) == (want_in, want_out) {
            Ok(())
        } else {
            Err(syntax(line, format!("{name} takes {want_in} input(s) and {want_out} output(s)")))
        }
    };
    let gate = match *op {
        "XOR" | "AND" => {
            arity(op, 2, 1)?;
            let (a, b, o) = (w(0)?, w(1)?, w(2)?);
            if *op == "XOR" {
                Gate::Xor { a, b, out: o }
            } else {
                Gate::And { a, b, out: o }
            }
        }
        "INV" => {
            arity("INV", 1, 1)?;
            Gate::Inv { a: w(0)?, out: w(1)? }
        }
        "EQW" => {
            arity("EQW", 1, 1)?;
            Gate::Copy { a: w(0)?, out: w(1)? }
        }
        "EQ" => {
            arity("EQ", 1, 1)?;
            let value = match operands[0] {
                "0" => false,
                "1" => true,
                _ => return Err(syntax(line, "EQ takes the constant 0 or 1 as its input")),
            };
            Gate::Const { value, out: w(1)? }
        }
        "MAND" => {
            if n_out == 0 || n_in != n_out.saturating_mul(2) {
                return Err(syntax(line, "MAND takes 2k inputs and k outputs (k >= 1)"));
            }
            // n_out <= operands.len(), so it fits in usize.
            let k = n_out as usize;
            let mut ands = Vec::with_capacity(k);
            for i in 0..k {
                ands.push((w(i)?, w(k + i)?, w(2 * k + i)?));
            }
            // All ANDs of one line happen at once: every operand must be defined before the line,
            // even one that another AND of the same line writes.
            for &(a, b, _) in &ands {
                tracker.read(a, at)?;
                tracker.read(b, at)?;
            }
            for &(a, b, o) in &ands {
                tracker.write(o, at)?;
                out.push(Gate::And { a, b, out: o });
            }
            return Ok(());
        }
        _ => return Err(CircuitError::UnknownGate { at }),
    };
    tracker.gate(&gate, at)?;
    out.push(gate);
    Ok(())
}

/// Writes Bristol Fashion text; see [`Circuit::to_bristol`].
pub(crate) fn write(c: &Circuit) -> String {
    // About 20 bytes per gate line for circuits of up to a million wires.
    let mut s = String::with_capacity(64 + c.gates.len().saturating_mul(20));
    // Writing to a String cannot fail, so the fmt::Results are ignored.
    let _ = writeln!(s, "{} {}", c.gates.len(), c.wires);
    for widths in [&c.inputs, &c.outputs] {
        let _ = write!(s, "{}", widths.len());
        for w in widths.iter() {
            let _ = write!(s, " {w}");
        }
        s.push('\n');
    }
    s.push('\n');
    for gate in &c.gates {
        let _ = match *gate {
            Gate::Xor { a, b, out } => writeln!(s, "2 1 {a} {b} {out} XOR"),
            Gate::And { a, b, out } => writeln!(s, "2 1 {a} {b} {out} AND"),
            Gate::Inv { a, out } => writeln!(s, "1 1 {a} {out} INV"),
            Gate::Const { value, out } => writeln!(s, "1 1 {} {out} EQ", u8::from(value)),
            Gate::Copy { a, out } => writeln!(s, "1 1 {a} {out} EQW"),
        };
    }
    s
}
