//! Rendered diagnostics of malformed specs, one snapshot per mistake.

fn diagnose(files: &[(&str, &str)]) -> String {
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    match spec::load_sources("test", &sources) {
        Ok(_) => panic!("the spec was accepted, but errors were expected"),
        Err(diagnostics) => diagnostics.to_string(),
    }
}

/// `case!(name, "spec text")`: the diagnostics of a one-file spec `test.pds`.
macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(diagnose(&[("test.pds", $src)]));
        }
    };
}

// ------------------------------------------------------------------ parse errors

case!(
    parse_missing_closing_brace,
    "struct A {\n  a: u32\n\nstruct B {\n  b: u32\n}\n"
);

case!(
    parse_unterminated_block,
    "struct A {\n  a: u32\n  b: [u8; a]\n"
);

case!(
    parse_array_without_semicolon,
    "struct A {\n  n: u32\n  a: [u32 n]\n}\n"
);

case!(parse_stray_token, "struct A {\n  a: u32 )\n}\n");

case!(parse_bad_integer, "enum E: u8 {\n  A = 12z\n}\n");

case!(
    parse_integer_too_large,
    "const BIG: u64 = 0x1_0000_0000_0000_0000\n"
);

case!(parse_hex_without_digits, "const X: u32 = 0x\n");

// Words of the language are keywords only where the grammar needs them (`flags: u32` is a
// field); these are the places where they stay reserved, or where a keyword-named element
// that lost its `:` cannot be told from an item after a missing `}`.
case!(
    parse_expression_word_as_field,
    "struct A {\n  remaining: u32\n}\n"
);

case!(
    parse_expression_word_as_parameter,
    "struct A(ctx: u64) {\n  a: u32\n}\n"
);

case!(parse_keyword_as_item_name, "struct flags {\n  a: u32\n}\n");

case!(
    parse_keyword_as_switch_variant,
    "struct A {\n  k: u32\n  v: switch k {\n    1 => struct: u32\n  }\n}\n"
);

case!(
    parse_keyword_field_without_colon,
    "struct A {\n  a: u32\n  flags u32\n}\n"
);

case!(
    parse_expression_cut_short_before_an_item,
    "struct A {\n  a: u32\n  b: u32 if\nstruct B {\n  c: u32\n}\n"
);

case!(
    parse_keyword_variant_without_equals,
    "enum E: u8 {\n  A = 1\n  struct 2\n}\n"
);

case!(parse_unknown_item_keyword, "strcut A {\n  a: u32\n}\n");

case!(parse_missing_colon, "struct A {\n  a u32\n}\n");

case!(
    parse_duplicate_clause,
    "struct A pad_to 8 pad_to 4 {\n  a: u32\n}\n"
);

case!(
    parse_unclosed_parenthesis,
    "struct A {\n  a: u32\n  b: u32 if (a > 1 && a < 4\n}\n"
);

case!(
    parse_chained_comparison,
    "struct A {\n  a: u32\n  b: u32 if 1 < a < 4\n}\n"
);

case!(
    parse_switch_arm_without_arrow,
    "struct A {\n  k: u32\n  v: switch k {\n    1 One: u32\n  }\n}\n"
);

case!(parse_bad_type, "struct A {\n  a: 42\n}\n");

case!(
    parse_missing_record_brace,
    "record R = 1 trailer T if ctx.x\n  a: u32\n}\n"
);

// ------------------------------------------------------------------ names

#[test]
fn duplicate_item_across_files() {
    insta::assert_snapshot!(diagnose(&[
        ("a.pds", "/// First.\nstruct Header {\n  a: u32\n}\n"),
        ("b.pds", "\nenum Header: u8 { A = 1 }\n"),
    ]));
}

case!(
    duplicate_field,
    "struct A {\n  size: u32\n  data: u64\n  size: u16\n}\n"
);

case!(
    duplicate_enum_variant,
    "enum E: u8 {\n  A = 1\n  B = 2\n  A = 3\n}\n"
);

case!(duplicate_flag, "flags F: u8 { X = 0, Y = 1, X = 2 }\n");

case!(duplicate_bitfield_member, "bitfield B: u8 { a: 4, a: 4 }\n");

case!(
    unknown_type_with_suggestion,
    "flags SampleType: u64 { IP = 0 }\nstruct A {\n  st: SampleTyp\n}\n"
);

case!(
    unknown_type_without_suggestion,
    "struct A {\n  a: Whatever\n}\n"
);

case!(primitive_redefined, "struct u32 {\n  a: u8\n}\n");

case!(
    constant_used_as_type,
    "const N: u32 = 4\nstruct A {\n  a: N\n}\n"
);

case!(
    record_used_as_field_type,
    "record R = 1 { a: u32 }\nstruct A {\n  r: R\n}\n"
);

// ------------------------------------------------------------------ enums, flags, bitfields, consts

case!(
    flag_bit_outside_repr,
    "flags F: u16 {\n  LOW = 0\n  HIGH = 16\n}\n"
);

case!(flag_range_outside_repr, "flags F: u8 {\n  MODE = 4..8\n}\n");

case!(flag_range_reversed, "flags F: u8 {\n  MODE = 3..1\n}\n");

case!(
    bitfield_widths_too_small,
    "bitfield B: u64 {\n  disabled: 1\n  inherit: 1\n  reserved: 61\n}\n"
);

case!(bitfield_widths_too_large, "bitfield B: u8 { a: 4, b: 5 }\n");

case!(bitfield_zero_width, "bitfield B: u8 { a: 0, b: 8 }\n");

case!(enum_signed_repr, "enum E: i32 {\n  A = -1\n}\n");

case!(enum_unknown_repr, "enum E: u23 {\n  A = 1\n}\n");

case!(flags_float_repr, "flags F: f64 { A = 1 }\n");

case!(
    enum_negative_out_of_range,
    "enum E: u8 {\n  OK = -128\n  TOO_LOW = -129\n}\n"
);

case!(enum_value_out_of_range, "enum E: u16 {\n  A = 0x10000\n}\n");

case!(const_out_of_range, "const A: i8 = 128\nconst B: u8 = -1\n");

case!(const_float_type, "const PI: f64 = 3\n");

// ------------------------------------------------------------------ context

case!(
    context_field_in_two_blocks,
    "context {\n  a: u32\n}\ncontext {\n  b: u32\n  a: u32\n}\n"
);

// `from`: where the container takes a context value.
const SOURCES: &str = "bitfield F: u8 { on: 1, level: 3, rest: 4 }\nstruct Attr {\n  size: u32 = sizeof(self)\n  mask: u64\n  bits: F\n  extra: u64 if mask != 0\n  name: cstr\n}\n";

#[test]
fn context_source_mistakes() {
    let cases = [
        "context {\n  m: u64 from Atr.mask\n}\n",
        "context {\n  m: u64 from Attr.mask_\n}\n",
        "context {\n  m: u32 from Attr.mask\n}\n",
        "context {\n  m: u32 from Attr.size\n}\n",
        "context {\n  m: bool from Attr.bits.of\n}\n",
        "context {\n  m: bool from Attr.mask.on\n}\n",
        "context {\n  m: u64 from Attr.name\n}\n",
        "context {\n  m: bool from Attr.bits.level\n}\n",
    ];
    let text: Vec<String> = cases
        .iter()
        .map(|c| diagnose(&[("test.pds", &format!("{SOURCES}{c}"))]))
        .collect();
    insta::assert_snapshot!(text.join("\n"));
}

case!(
    context_bitfield_type,
    "bitfield B: u8 { a: 8 }\ncontext {\n  b: B\n}\n"
);

case!(
    unknown_context_field,
    "flags SampleType: u64 { IP = 0 }\ncontext {\n  sample_type: SampleType\n}\nstruct A {\n  ip: u64 if ctx.sample_typ has IP\n}\n"
);

case!(
    context_not_declared,
    "struct A {\n  a: u64 if ctx.sample_id_all\n}\n"
);

// ------------------------------------------------------------------ structs and parameters

case!(
    struct_argument_count,
    "struct Regs(mask: u64, abi: u64) {\n  regs: [u64; popcount(mask)]\n}\nstruct A {\n  m: u64\n  r: Regs(m)\n}\n"
);

case!(struct_arguments_to_scalar, "struct A {\n  a: u32(4)\n}\n");

case!(
    parameter_not_scalar,
    "struct Inner { a: u8 }\nstruct A(inner: Inner) {\n  a: u8\n}\n"
);

case!(
    parameter_field_clash,
    "struct A(size: u32) {\n  size: u32\n}\n"
);

case!(
    field_used_before_decoded,
    "struct A {\n  data: bytes[size]\n  size: u32\n}\n"
);

case!(
    field_used_in_own_condition,
    "struct A {\n  a: u32 if a != 0\n}\n"
);

case!(
    unknown_name_with_suggestion,
    "struct A {\n  count_: u32\n  items: [u64; coutn_]\n}\n"
);

case!(
    unknown_name_that_is_a_context_field,
    "context {\n  nr_cpus: u32\n}\nstruct A {\n  cpus: [u32; nr_cpus]\n}\n"
);

case!(
    non_scalar_field_in_expression,
    "struct Inner { a: u8 }\nstruct A {\n  inner: Inner\n  data: bytes[inner]\n}\n"
);

case!(bool_field_type, "struct A {\n  on: bool\n}\n");

case!(
    recursive_struct,
    "struct Node {\n  value: u32\n  next: Node if value != 0\n}\n"
);

// ------------------------------------------------------------------ expressions

case!(
    has_on_plain_integer,
    "struct A {\n  mask: u64\n  ip: u64 if mask has IP\n}\n"
);

case!(
    has_unknown_flag,
    "flags SampleType: u64 { IP = 0, TID = 1, TIME = 2 }\ncontext {\n  sample_type: SampleType\n}\nstruct A {\n  time: u64 if ctx.sample_type has TIEM\n}\n"
);

case!(
    condition_not_boolean,
    "struct A {\n  n: u32\n  a: u32 if n\n}\n"
);

case!(
    length_not_integer,
    "struct A {\n  n: u32\n  a: bytes[n > 4]\n}\n"
);

case!(
    within_not_integer,
    "struct A {\n  n: u32\n  a: u64 within n == 8\n}\n"
);

case!(
    logical_operator_on_integers,
    "struct A {\n  a: u32\n  b: u32 if a && a > 1\n}\n"
);

case!(not_on_integer, "struct A {\n  a: u32\n  b: u32 if !a\n}\n");

case!(
    unknown_function,
    "struct A {\n  mask: u64\n  regs: [u64; popcnt(mask)]\n}\n"
);

case!(
    wrong_argument_count,
    "struct A {\n  a: u32\n  b: bytes[max(a)]\n}\n"
);

case!(
    float_in_expression,
    "struct A {\n  f: f64\n  b: bytes[f]\n}\n"
);

// ------------------------------------------------------------------ computed fields

case!(
    len_outside_computed_field,
    "struct A {\n  name: str[..]\n  copy: bytes[len(name)]\n}\n"
);

case!(
    len_of_array,
    "struct A {\n  n: u32 = len(items)\n  items: [u64; n]\n}\n"
);

case!(
    count_of_bytes,
    "struct A {\n  n: u32 = count(data)\n  data: bytes[n]\n}\n"
);

case!(
    count_field_not_the_length,
    "struct A {\n  nr: u32 = count(entries)\n  other: u32\n  entries: [u64; other]\n}\n"
);

case!(
    count_field_with_rest_array,
    "struct A {\n  nr: u32 = count(entries)\n  entries: [u64; ..]\n}\n"
);

case!(
    computed_field_not_integer,
    "struct A bounded_by 16 {\n  size: f64 = sizeof(self)\n}\n"
);

case!(
    computed_field_reads_field,
    "struct A {\n  a: u32\n  b: u32 = a + 1\n}\n"
);

case!(
    computed_unknown_field,
    "struct A {\n  n: u32 = count(itmes)\n  items: [u8; n]\n}\n"
);

case!(
    sizeof_self_in_condition,
    "struct A {\n  a: u32 if sizeof(self) > 4\n}\n"
);

case!(self_outside_sizeof, "struct A {\n  a: u32 = len(self)\n}\n");

// ------------------------------------------------------------------ switches

case!(
    switch_repeated_pattern,
    "struct A {\n  k: u32\n  v: switch k {\n    1 => One: u32\n    0x1 => AlsoOne: u64\n  }\n}\n"
);

case!(
    switch_two_defaults,
    "struct A {\n  k: u32\n  v: switch k {\n    1 => One: u32\n    _ => Other: u64\n    _ => Rest: bytes[..]\n  }\n}\n"
);

case!(
    switch_bool_pattern_on_integer,
    "struct A {\n  k: u32\n  v: switch k {\n    true => Yes: u32\n    _ => No: u8\n  }\n}\n"
);

case!(
    switch_integer_pattern_on_bool,
    "struct A {\n  k: u32\n  v: switch k > 2 {\n    1 => Yes: u32\n    _ => No: u8\n  }\n}\n"
);

case!(
    switch_duplicate_variant,
    "struct A {\n  k: u32\n  v: switch k {\n    1 => Same: u32\n    2 => Same: u8\n  }\n}\n"
);

case!(
    switch_negative_pattern_out_of_width,
    "struct A {\n  k: u8\n  v: switch k {\n    -200 => Low: u32\n    _ => Other: u8\n  }\n}\n"
);

case!(
    switch_without_arms,
    "struct A {\n  k: u32\n  v: switch k { }\n}\n"
);

case!(
    switch_enum_name_clash,
    "struct AV { a: u8 }\nstruct A {\n  k: u32\n  v: switch k { 1 => One: u8 }\n}\n"
);

// ------------------------------------------------------------------ records and features

case!(
    duplicate_record_id,
    "record Mmap = 1 { pid: u32 }\nrecord Lost = 2 { id: u64 }\nrecord Comm = 1 { pid: u32 }\n"
);

case!(
    duplicate_feature_id,
    "feature Hostname = 3 { a: u32 }\nfeature OsRelease = 3 { a: u32 }\n"
);

case!(feature_id_out_of_range, "feature Big = 256 { a: u32 }\n");

case!(
    record_id_out_of_range,
    "record Big = 0x1_0000_0000 { a: u32 }\n"
);

case!(record_without_id, "record Mmap { pid: u32 }\n");

case!(struct_with_id, "struct S = 4 { a: u32 }\n");

case!(record_with_parameters, "record R(x: u32) = 1 { a: u32 }\n");

case!(record_bounded_by, "record R = 1 bounded_by 8 { a: u32 }\n");

case!(
    trailer_not_fixed_size,
    "struct SampleId {\n  pid: u32\n  name: cstr\n}\nrecord R = 1 trailer SampleId { a: u32 }\n"
);

case!(
    trailer_condition_on_field,
    "struct SampleId {\n  n: u32\n  ids: [u64; n]\n}\nrecord R = 1 trailer SampleId { a: u32 }\n"
);

case!(
    trailer_unknown_struct,
    "struct SampleId { a: u32 }\nrecord R = 1 trailer SampleID { a: u32 }\n"
);

case!(
    trailer_if_uses_remaining,
    "struct SampleId { a: u32 }\nrecord R = 1 trailer SampleId if remaining > 4 { a: u32 }\n"
);

case!(
    trailer_on_struct,
    "struct SampleId { a: u32 }\nstruct S trailer SampleId { a: u32 }\n"
);

case!(
    payload_not_last,
    "record R = 1 {\n  size: u32\n  payload data: bytes[size]\n  more: u32\n}\n"
);

case!(
    payload_in_struct,
    "struct S {\n  size: u32\n  payload data: bytes[size]\n}\n"
);

case!(
    payload_twice,
    "record R = 1 {\n  size: u32\n  payload a: bytes[size]\n  payload b: bytes[size]\n}\n"
);

case!(
    payload_rest_length,
    "record R = 1 {\n  payload data: bytes[..]\n}\n"
);

case!(
    feature_type_outside_record,
    "struct S {\n  id: u32\n  data: feature(id)\n}\n"
);

case!(
    pad_to_not_power_of_two,
    "record R = 1 pad_to 6 {\n  a: u32\n}\n"
);

// A bounded struct's generated type has a member `tail` (the bytes after its last field),
// and a record's trailer is the member named after its struct.
case!(
    member_named_tail_in_a_record,
    "record R = 1 {\n  tail: u32\n}\n"
);

case!(
    member_named_tail_in_a_bounded_struct,
    "struct S bounded_by n {\n  n: u32\n  tail: u32\n}\n"
);

case!(
    trailer_named_tail,
    "struct Tail {\n  id: u64\n}\nrecord R = 1 trailer Tail {\n  a: u32\n}\n"
);

case!(
    trailer_named_like_a_field,
    "struct SampleId {\n  id: u64\n}\nrecord R = 1 trailer SampleId {\n  sample_id: u32\n}\n"
);

// ------------------------------------------------------------------ several errors at once

case!(
    several_errors_are_all_reported,
    "enum E: u8 { A = 1, A = 2 }\nstruct S {\n  a: Unknown\n  b: u32 if c\n  d: bytes[e]\n}\nrecord R = 1 pad_to 3 { x: u8 }\n"
);

case!(
    big_endian_if_on_a_scalar,
    "struct A {\n  order: u8\n  x: u32 big_endian_if order != 0\n}\n"
);

case!(
    big_endian_if_not_a_condition,
    "struct B {\n  a: u32\n}\nstruct A {\n  order: u8\n  x: B big_endian_if order\n}\n"
);

// ------------------------------------------------------------------ run-time words

case!(
    word_size_from_a_field,
    "struct A {\n  n: u32\n  a: word[n]\n}\n"
);

case!(word_size_not_4_or_8, "struct A {\n  a: word[2]\n}\n");

case!(
    word_size_not_an_integer,
    "context {\n  wide: bool\n}\nstruct A {\n  a: word[ctx.wide]\n}\n"
);

case!(
    word_size_from_remaining,
    "record R = 1 {\n  a: word[remaining]\n}\n"
);

case!(parse_word_without_size, "struct A {\n  a: word\n}\n");

case!(
    word_in_trailer,
    "context {\n  ws: u8\n}\nstruct T {\n  a: word[ctx.ws]\n}\nrecord R = 1 trailer T {\n  x: u32\n}\n"
);

case!(
    word_used_with_has,
    "context {\n  ws: u8\n}\nflags F: u32 { A = 0 }\nstruct S {\n  w: word[ctx.ws]\n  x: u32 if w has A\n}\n"
);

// ------------------------------------------------------------------ split integers

case!(split_of_a_u64, "struct A {\n  a: split[u64, u32]\n}\n");

case!(
    split_of_a_signed_part,
    "struct A {\n  a: split[u16, i16]\n}\n"
);

case!(
    split_of_a_declared_type,
    "enum E: u16 { A = 1 }\nstruct A {\n  a: split[E, u16]\n}\n"
);

case!(split_of_24_bits, "struct A {\n  a: split[u16, u8]\n}\n");

case!(
    parse_split_with_one_part,
    "struct A {\n  a: split[u16]\n}\n"
);

case!(
    split_used_with_has,
    "flags F: u32 { A = 0 }\nstruct S {\n  s: split[u16, u16]\n  x: u32 if s has A\n}\n"
);

case!(
    split_computed,
    "struct S {\n  n: split[u16, u16] = count(x)\n  x: [u8; n]\n}\n"
);

case!(split_with_hex, "struct S {\n  @hex s: split[u16, u16]\n}\n");

case!(split_as_an_item_name, "struct split {\n  a: u32\n}\n");

// ------------------------------------------------------------------ display attributes

case!(
    display_unknown_attribute,
    "struct A {\n  @octal a: u64\n}\n"
);

case!(
    display_hex_on_text,
    "struct A {\n  n: u32 = len(s)\n  @hex s: str[n]\n}\n"
);

case!(
    display_hex_names_not_an_enum,
    "flags F: u64 { X = 0 }\nstruct A {\n  @hex(F) a: u64\n}\n"
);

case!(
    display_signed_with_argument,
    "enum E: u32 { A = 1 }\nstruct A {\n  @signed(E) pid: u32\n}\n"
);

case!(display_attribute_without_field, "struct A {\n  @hex\n}\n");

case!(
    display_name_by_not_a_bitfield_member,
    "bitfield W: u8 { freq: 1, wide: 7 }\nstruct A {\n  @name_by(w.wide, sample_freq, sample_period) p: u64\n  w: W\n}\n"
);

case!(
    display_name_by_without_a_member,
    "struct A {\n  @name_by(w, a, b) p: u64\n  w: u8\n}\n"
);

case!(
    display_text_on_an_integer,
    "struct A {\n  @text a: u64\n}\n"
);

case!(
    display_name_by_missing_arguments,
    "struct A {\n  @name_by(w.freq) p: u64\n}\n"
);

case!(
    display_hex_too_many_arguments,
    "enum E: u64 { A = 1 }\nstruct A {\n  @hex(E, P_, Q_) a: u64\n}\n"
);
