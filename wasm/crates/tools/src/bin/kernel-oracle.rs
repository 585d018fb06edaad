//! Native reference for the Wasm build: reads raw bytes on stdin, runs one kernel natively, writes
//! raw bytes on stdout. Tests feed the same random inputs to the `.wasm` and compare byte for byte.
//!
//! usage: kernel-oracle [--backend auto|portable] <op> [arg]
//! ops: aes-fixed | aes <keyhex> | cr | ccr | sigma | tccr-counter <basehex> | gf128-mul |
//!      gf128-inner | transpose-128xn <n> | transpose-nx128 <n> | prg <seedhex> <nbytes>
//! (gf128-* read a‖b, two equal halves.)

use std::io::{Read, Write};
use std::process::ExitCode;

use webmpc_core::aes::{Aes128, Backend, FIXED_KEY};
use webmpc_core::hash::{sigma_many, Hasher};
use webmpc_core::{gf128, prg::Prg, transpose, Block};
use webmpc_tools::parse_hex16;

fn run(args: &[String], input: &[u8]) -> Result<Vec<u8>, String> {
    let mut args = args.iter().map(String::as_str).peekable();
    let mut backend = Backend::best();
    if args.peek() == Some(&"--backend") {
        args.next();
        backend = match args.next() {
            Some("auto") => Backend::best(),
            Some("portable") => Backend::PortableBitsliced,
            other => return Err(format!("unknown backend {other:?}")),
        };
    }
    let op = args.next().ok_or("missing op")?;
    let mut arg = || args.next().ok_or_else(|| format!("{op}: missing argument"));
    let blocks = || Block::slice_from_bytes(input).ok_or("input is not a multiple of 16 bytes");
    let aes = |key: Block| Aes128::with_backend(key, backend).ok_or("backend unavailable");
    let err = |e: webmpc_core::KernelError| e.to_string();
    let mut out = vec![Block::ZERO; input.len() / 16];
    match op {
        "aes-fixed" | "aes" => {
            let key = if op == "aes" { Block(parse_hex16(arg()?)?) } else { FIXED_KEY };
            out.copy_from_slice(blocks()?);
            aes(key)?.encrypt_blocks(&mut out);
        }
        "cr" | "ccr" | "tccr-counter" => {
            let pi = aes(FIXED_KEY)?;
            let h = Hasher::with_permutation(&pi);
            match op {
                "cr" => h.cr_many(blocks()?, &mut out),
                "ccr" => h.ccr_many(blocks()?, &mut out),
                _ => h.tccr_many_counter(blocks()?, u128::from_le_bytes(parse_hex16(arg()?)?), &mut out),
            }
            .map_err(err)?;
        }
        "sigma" => sigma_many(blocks()?, &mut out).map_err(err)?,
        "gf128-mul" | "gf128-inner" => {
            let (a, b) = blocks()?.split_at(out.len() / 2);
            if op == "gf128-inner" {
                return Ok(gf128::gf128_inner_product(a, b).map_err(err)?.0.to_vec());
            }
            out.truncate(a.len());
            gf128::gf128_mul_many(a, b, &mut out).map_err(err)?;
        }
        "transpose-128xn" | "transpose-nx128" => {
            let n: usize = arg()?.parse().map_err(|e| format!("n: {e}"))?;
            let mut bytes = vec![0u8; input.len()];
            if op == "transpose-128xn" {
                transpose::transpose_128xn(input, n, &mut bytes).map_err(err)?;
            } else {
                transpose::transpose_nx128(input, n, &mut bytes).map_err(err)?;
            }
            return Ok(bytes);
        }
        "prg" => {
            let mut prg = Prg::from_seed(Block(parse_hex16(arg()?)?));
            let n: usize = arg()?.parse().map_err(|e| format!("nbytes: {e}"))?;
            let mut bytes = vec![0u8; n];
            prg.fill_bytes(&mut bytes);
            return Ok(bytes);
        }
        _ => return Err(format!("unknown op {op}")),
    }
    Ok(Block::slice_as_bytes(&out).to_vec())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("kernel-oracle: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    match run(&args, &input) {
        Ok(out) => {
            if let Err(e) = std::io::stdout().write_all(&out) {
                eprintln!("kernel-oracle: writing stdout: {e}");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kernel-oracle: {e}");
            ExitCode::FAILURE
        }
    }
}
