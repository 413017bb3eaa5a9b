//! The gperftools spec through `perfdata_derive::spec!` (the generator as a proc macro)
//! decodes and encodes exactly as the committed module from `cargo xtask gen` does.

perfdata_derive::spec! {
    dir: "../spec/gperftools",
}

use perfdata::gperftools::types as committed;
use perfdata::rt::{BigEndian, LittleEndian, Reader, StaticEndian, Writer};

fn both_agree<E: StaticEndian>(word_size: u8) {
    // A header with one extra slot, a record, the trailer.
    let slots: [u64; 12] = [0, 4, 0, 250, 0, 9, 3, 2, 0x401000, 0x402000, 0, 1];
    let mut w = Writer::<E>::new();
    for s in slots {
        w.put_word(u64::from(word_size), s).unwrap();
    }
    let bytes = w.into_vec();
    let (cm, mc) = (committed::Ctx { word_size }, gperftools::Ctx { word_size });
    let mut r1 = Reader::<E>::new(&bytes, 0);
    let mut r2 = Reader::<E>::new(&bytes, 0);
    let h1 = committed::Header::decode(&mut r1, &cm).unwrap();
    let h2 = gperftools::Header::decode(&mut r2, &mc).unwrap();
    assert_eq!((h1.period_us, &h1.extra), (h2.period_us, &h2.extra));
    assert_eq!(h1.extra, [9]);
    let c1 = committed::Record::decode(&mut r1, &cm).unwrap();
    let c2 = gperftools::Record::decode(&mut r2, &mc).unwrap();
    assert_eq!((c1.count, &c1.pcs), (c2.count, &c2.pcs));
    assert_eq!(c1.pcs, [0x401000, 0x402000]);
    assert_eq!(r1.offset(), r2.offset());
    // Encoding: the same bytes from both.
    let mut w1 = Writer::<E>::new();
    let mut w2 = Writer::<E>::new();
    h1.encode(&mut w1, &cm).unwrap();
    c1.encode(&mut w1, &cm).unwrap();
    h2.encode(&mut w2, &mc).unwrap();
    c2.encode(&mut w2, &mc).unwrap();
    assert_eq!(w1.as_slice(), w2.as_slice());
    assert_eq!(w1.as_slice(), &bytes[..w1.len()]);
}

#[test]
fn the_macro_and_the_committed_module_agree() {
    both_agree::<LittleEndian>(4);
    both_agree::<LittleEndian>(8);
    both_agree::<BigEndian>(4);
    both_agree::<BigEndian>(8);
}
