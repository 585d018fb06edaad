//! Native kernel benchmarks, one JSON object per line (the `kernels` suite's `native` rows and
//! the native RustCrypto baseline). `npm run bench -- kernels` runs this beside the Wasm rows.

use aes::cipher::{BlockEncrypt, KeyInit};
use webmpc_core::aes::{Aes128, Backend, FIXED_KEY};
use webmpc_core::hash::Hasher;
use webmpc_core::{gf128, prg::Prg, transpose, Block};
use webmpc_tools::{measure_mb_per_s, row};

const BLOCKS: usize = 4096;
const SUITE: &str = "kernels";

fn main() {
    let millis: u64 = std::env::var("BENCH_MILLIS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let bytes = BLOCKS * 16;
    let emit = |case: &str, value: f64, runtime: &str, implementation: &str| {
        println!("{}", row(SUITE, case, "throughput", value, "MB/s", runtime, implementation));
    };
    let mut buf: Vec<Block> = (0..BLOCKS as u128).map(|i| Block::from_u128(i * 0x9e37_79b9_7f4a_7c15)).collect();
    let mut out = vec![Block::ZERO; BLOCKS];

    for backend in Backend::available() {
        let aes = Aes128::with_backend(FIXED_KEY, backend).expect("listed as available");
        emit(
            "aes128-fixed-key-ecb-4096",
            measure_mb_per_s(bytes, millis, || aes.encrypt_blocks(&mut buf)),
            "native",
            backend.name(),
        );
        let h = Hasher::with_permutation(&aes);
        emit(
            "cr-4096",
            measure_mb_per_s(bytes, millis, || h.cr_many(&buf, &mut out).unwrap()),
            "native",
            backend.name(),
        );
        emit(
            "ccr-4096",
            measure_mb_per_s(bytes, millis, || h.ccr_many(&buf, &mut out).unwrap()),
            "native",
            backend.name(),
        );
        let mut tweak = 0u128;
        emit(
            "tccr-4096",
            measure_mb_per_s(bytes, millis, || {
                h.tccr_many_counter(&buf, tweak, &mut out).unwrap();
                tweak += BLOCKS as u128;
            }),
            "native",
            backend.name(),
        );
    }

    let rc = aes::Aes128::new(&FIXED_KEY.0.into());
    let rc_blocks: &mut [aes::Block] = bytemuck_blocks(&mut buf);
    emit(
        "aes128-fixed-key-ecb-4096",
        measure_mb_per_s(bytes, millis, || rc.encrypt_blocks(rc_blocks)),
        "rustcrypto-aes-native",
        "rustcrypto-aes-0.8-autodetect",
    );

    let mut prg = Prg::from_seed(Block::from_u128(1));
    let mut prg_out = vec![0u8; bytes];
    emit(
        "prg-aes-ctr-64KiB",
        measure_mb_per_s(bytes, millis, || prg.fill_bytes(&mut prg_out)),
        "native",
        Backend::best().name(),
    );

    // OT extension transposes 128 rows of n bits; 2^16 columns is a typical chunk.
    let n = 1 << 16;
    let rows = vec![0xa5u8; 16 * n];
    let mut cols = vec![0u8; 16 * n];
    emit(
        "transpose-128x65536",
        measure_mb_per_s(16 * n, millis, || transpose::transpose_128xn(&rows, n, &mut cols).unwrap()),
        "native",
        "core",
    );

    let a: Vec<Block> = buf.clone();
    let b: Vec<Block> = buf.iter().map(|x| *x ^ Block::from_u128(u128::MAX / 3)).collect();
    let mbs = measure_mb_per_s(bytes, millis, || gf128::gf128_mul_many(&a, &b, &mut out).unwrap());
    println!("{}", row(SUITE, "gf128-mul-4096", "throughput", mbs * 1e6 / 16.0 / 1e6, "Mmul/s", "native", "core"));
    let mbs = measure_mb_per_s(bytes, millis, || {
        std::hint::black_box(gf128::gf128_inner_product(&a, &b).unwrap());
    });
    println!(
        "{}",
        row(SUITE, "gf128-inner-product-4096", "throughput", mbs * 1e6 / 16.0 / 1e6, "Mmul/s", "native", "core")
    );
}

fn bytemuck_blocks(blocks: &mut [Block]) -> &mut [aes::Block] {
    // SAFETY: `Block` and `aes::Block` are both 16 bytes with alignment 1.
    unsafe { core::slice::from_raw_parts_mut(blocks.as_mut_ptr() as *mut aes::Block, blocks.len()) }
}
