// dwarf-rust: a Rust release binary (rustc -C opt-level=3 -C debuginfo=1, no frame
// pointers: rustc's default). main -> run -> checksum_a | checksum_b -> leaf, with
// iterator adaptors and closures inlined into leaf, and a Vec sorted by a closure.
use std::hint::black_box;

#[inline(never)]
fn leaf(data: &[u64], seed: u64) -> u64 {
    data.iter()
        .map(|&x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed)
        .filter(|x| x & 3 != 0)
        .fold(seed, |acc, x| acc.rotate_left(5) ^ x)
}

#[inline(never)]
fn checksum_a(data: &[u64], k: u64) -> u64 {
    let r = leaf(data, k);
    black_box(r) + 1
}

#[inline(never)]
fn checksum_b(data: &mut Vec<u64>, k: u64) -> u64 {
    data.sort_unstable_by(|a, b| (a ^ k).cmp(&(b ^ k)));
    let r = leaf(data, k ^ 0x55);
    black_box(r) + 2
}

#[inline(never)]
fn run(rounds: u64) -> u64 {
    let mut data: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut acc = 0u64;
    for i in 0..rounds {
        acc = acc.wrapping_add(if i % 4 == 0 {
            checksum_b(&mut data, i)
        } else {
            checksum_a(&data, i)
        });
    }
    acc
}

fn main() {
    let r = run(black_box(80000));
    println!("{r}");
}
