//! The roofline suite's Wasm side (`npm run bench -- roofline`): each primitive the roofline
//! counts, timed in a loop inside this instance (`rooflinePrimitive`). The units of work run
//! through the other bench entry points of this module (`OtLocalBench`, `GarbleLocalBench`,
//! `fpreLocalRun`, `MascotLocalBench`).
//!
//! The primitive loops call the same kernels the protocols call, in the batch shapes they use:
//! fixed-key AES over 4096 blocks (the hashes' shape), GF(2^128) inner products with prepared
//! coefficients (the KOS check's), the 128 × 65536 transpose (a KOS chunk), SHA-256 on whole
//! 64-byte blocks, the ristretto255 operations the base OT performs, and MASCOT's F_p
//! multiplication (independent products, as its combinations and MAC terms are).

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use sha2::{Digest, Sha256};
use wasm_bindgen::prelude::*;
use webmpc_core::aes::fixed_key_aes;
use webmpc_core::gf128::Gf128Coefficients;
use webmpc_core::transpose::transpose_128xn;
use webmpc_core::Block;

fn err(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn blocks(n: usize, seed: u128) -> Vec<Block> {
    (0..n as u128)
        .map(|i| Block::from_u128((i + seed).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
        .collect()
}

/// `n` distinct points, cheaply (a chain of additions), so a primitive's setup stays out of its
/// timing.
fn points(n: usize) -> Vec<RistrettoPoint> {
    let g = RistrettoPoint::mul_base(&scalar(9));
    let mut p = RistrettoPoint::mul_base(&scalar(10));
    (0..n)
        .map(|_| {
            p += g;
            p
        })
        .collect()
}

fn scalar(i: u64) -> Scalar {
    let mut wide = [0u8; 64];
    wide[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
    wide[8..16].copy_from_slice(&(i ^ 0x5555).to_le_bytes());
    wide[40] = 7;
    Scalar::from_bytes_mod_order_wide(&wide)
}

/// Ops per call of [`roofline_primitive`] for `name` (so JS divides time by it).
#[wasm_bindgen(js_name = rooflinePrimitiveOps)]
pub fn roofline_primitive_ops(name: &str) -> Result<f64, JsError> {
    Ok(match name {
        "aes_block" => 4096.0,
        "aes_key_expansion" => 256.0,
        "gf128_mul" => 129.0 * 511.0,
        "transpose_128x128" => 512.0,
        "sha2_block" => 1024.0,
        "curve_var_mul" | "curve_fixed_mul" | "curve_from_uniform" | "curve_decompress" | "curve_compress" => 8.0,
        "curve_compress_batch" => 256.0,
        "curve_table" => 1.0,
        "fp_mul" => 4096.0,
        _ => return Err(err(format!("unknown primitive {name}"))),
    })
}

/// Runs `reps` calls' worth of primitive `name` (see [`roofline_primitive_ops`] for the ops per
/// call) and returns a checksum byte so the work cannot be optimised away.
#[wasm_bindgen(js_name = rooflinePrimitive)]
pub fn roofline_primitive(name: &str, reps: u32) -> Result<u8, JsError> {
    let mut sum = 0u8;
    match name {
        "aes_block" => {
            let mut b = blocks(4096, 1);
            for _ in 0..reps {
                fixed_key_aes().encrypt_blocks(&mut b);
            }
            sum ^= b[7].0[3];
        }
        "aes_key_expansion" => {
            let keys = blocks(256, 2);
            for _ in 0..reps {
                for k in &keys {
                    let a = webmpc_core::aes::Aes128::new(*k);
                    sum ^= core::hint::black_box(&a).backend() as u8;
                }
            }
        }
        "gf128_mul" => {
            // One KOS check's shape: 129 rows of 511 blocks against prepared challenges.
            let chi = Gf128Coefficients::new(&blocks(511, 3));
            let rows = blocks(129 * 511, 4);
            for _ in 0..reps {
                for row in rows.chunks_exact(511) {
                    sum ^= chi.inner_product(row).map_err(err)?.0[5];
                }
            }
        }
        "transpose_128x128" => {
            let n = 1 << 16;
            let rows = blocks(n, 5);
            let mut out = vec![Block::ZERO; n];
            for _ in 0..reps {
                transpose_128xn(Block::slice_as_bytes(&rows), n, Block::slice_as_bytes_mut(&mut out)).map_err(err)?;
                sum ^= out[9].0[1];
            }
        }
        "sha2_block" => {
            // 1024 compressions: 16 messages of 63 whole blocks plus their padding block each.
            let msg = Block::slice_as_bytes(&blocks(4 * 63, 6)).to_vec();
            for _ in 0..reps {
                for _ in 0..16 {
                    sum ^= Sha256::digest(&msg)[0];
                }
            }
        }
        "curve_var_mul" => {
            let mut p = RistrettoPoint::mul_base(&scalar(1));
            for r in 0..reps {
                for i in 0..8 {
                    p = scalar(r as u64 * 8 + i) * p;
                }
            }
            sum ^= p.compress().as_bytes()[0];
        }
        "curve_fixed_mul" => {
            let mut acc = RistrettoPoint::mul_base(&scalar(2));
            for r in 0..reps {
                for i in 0..8 {
                    acc += RistrettoPoint::mul_base(&scalar(r as u64 * 8 + i));
                }
            }
            sum ^= acc.compress().as_bytes()[0];
        }
        "curve_from_uniform" => {
            let mut acc = RistrettoPoint::mul_base(&scalar(3));
            for r in 0..reps {
                for i in 0..8u64 {
                    let mut wide = [0u8; 64];
                    wide[..8].copy_from_slice(&(r as u64 * 8 + i).to_le_bytes());
                    wide[33] = 1;
                    acc += RistrettoPoint::from_uniform_bytes(&wide);
                }
            }
            sum ^= acc.compress().as_bytes()[0];
        }
        "curve_decompress" => {
            let pts = points(8);
            let enc: Vec<CompressedRistretto> = pts.iter().map(|p| p.compress()).collect();
            for _ in 0..reps {
                for c in &enc {
                    let p = c.decompress().ok_or_else(|| err("decompress"))?;
                    sum ^= (core::hint::black_box(&p) == &RistrettoPoint::default()) as u8;
                }
            }
        }
        "curve_compress" => {
            let pts = points(8);
            for _ in 0..reps {
                for p in &pts {
                    sum ^= p.compress().as_bytes()[0];
                }
            }
        }
        "curve_compress_batch" => {
            // 256 points per batch, as the base OT's batches are.
            let pts = points(256);
            for _ in 0..reps {
                let out = RistrettoPoint::double_and_compress_batch(&pts);
                sum ^= out[0].as_bytes()[0];
            }
        }
        "curve_table" => {
            let p = RistrettoPoint::mul_base(&scalar(4));
            for _ in 0..reps {
                let t = RistrettoBasepointTable::create(&p);
                sum ^= (&t * &scalar(5)).compress().as_bytes()[0];
            }
        }
        "fp_mul" => {
            // 4096 independent products (w·v summed into two accumulators: the combine and
            // MAC-check shape), over canonical elements.
            use webmpc_spdz::{Field, Fp};
            let xs: Vec<Fp> = blocks(4096, 7).iter().map(|b| Fp::from_hash(*b)).collect();
            let ys: Vec<Fp> = blocks(4096, 8).iter().map(|b| Fp::from_hash(*b)).collect();
            let mut acc = Fp::ZERO;
            for _ in 0..reps {
                for (x, y) in xs.iter().zip(&ys) {
                    acc += *x * *y;
                }
                acc = core::hint::black_box(acc);
            }
            sum ^= acc.to_bytes()[0];
        }
        _ => return Err(err(format!("unknown primitive {name}"))),
    }
    Ok(sum)
}
