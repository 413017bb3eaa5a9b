//! The tokens of an event format file, cut as libtraceevent's `__read_token` cuts them:
//! which characters group into one token decides how a `print fmt:` line parses (and
//! whether it parses), so the rules are libtraceevent's, quirks included.

/// A token's kind (libtraceevent's `enum tep_event_type`, without its error value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The end of the text, or a character that is neither printable nor a space.
    None,
    Space,
    Newline,
    /// An operator: `->`, `==`, `<<`, `?`, `[`…
    Op,
    /// `(`, `)` or `,`.
    Delim,
    /// Letters, digits and `_`: names and numbers (`0x1f`, `1UL`).
    Item,
    /// A double-quoted string (adjacent ones joined), escapes kept as written.
    DQuote,
    /// A single-quoted character, escapes kept as written.
    SQuote,
}

impl Kind {
    /// libtraceevent's `event_item_type`: a name, number or quoted text.
    pub(crate) fn is_item(self) -> bool {
        matches!(self, Kind::Item | Kind::DQuote | Kind::SQuote)
    }
}

/// A token: its kind and text (a quoted string without its quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub text: String,
}

impl Token {
    pub(crate) fn is(&self, kind: Kind, text: &str) -> bool {
        self.kind == kind && self.text == text
    }
}

/// Why the text could not be cut into tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LexError {
    /// A quoted string or character that the text does not close.
    Unterminated,
}

/// A cursor over the text.
pub(crate) struct Lexer<'t> {
    text: &'t [u8],
    at: usize,
}

fn kind_of(ch: Option<u8>) -> Kind {
    let Some(ch) = ch else {
        return Kind::None;
    };
    match ch {
        b'\n' => Kind::Newline,
        // C's isspace: space, \t, \v, \f, \r (\n above).
        b' ' | b'\t' | 0x0b | 0x0c | b'\r' => Kind::Space,
        c if c.is_ascii_alphanumeric() || c == b'_' => Kind::Item,
        b'\'' => Kind::SQuote,
        b'"' => Kind::DQuote,
        c if !(0x20..0x7f).contains(&c) => Kind::None,
        b'(' | b')' | b',' => Kind::Delim,
        _ => Kind::Op,
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl<'t> Lexer<'t> {
    pub(crate) fn new(text: &'t [u8]) -> Self {
        Lexer { text, at: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next_char(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// The next token, spaces included (`__read_token`).
    pub(crate) fn raw_token(&mut self) -> Result<Token, LexError> {
        let start = self.at;
        let Some(ch) = self.next_char() else {
            return Ok(tok(Kind::None, ""));
        };
        let kind = kind_of(Some(ch));
        match kind {
            Kind::None => return Ok(tok(Kind::None, "")),
            Kind::Newline | Kind::Delim => return Ok(tok(kind, &(ch as char).to_string())),
            Kind::Op => {
                let mut text = vec![ch];
                let test_equal = match ch {
                    b'-' if self.peek() == Some(b'>') => {
                        text.push(b'>');
                        self.at += 1;
                        false
                    }
                    b'-' | b'+' | b'|' | b'&' | b'>' | b'<' => {
                        if self.peek() == Some(ch) {
                            text.push(ch);
                            self.at += 1;
                            // `>>=` and `<<=`; `++`, `--`, `||`, `&&` end there.
                            matches!(ch, b'>' | b'<')
                        } else {
                            true
                        }
                    }
                    b'!' | b'=' => true,
                    _ => false,
                };
                if test_equal && self.peek() == Some(b'=') {
                    text.push(b'=');
                    self.at += 1;
                }
                return Ok(tok(Kind::Op, &String::from_utf8_lossy(&text)));
            }
            Kind::DQuote | Kind::SQuote => return self.quoted(kind, ch),
            Kind::Space | Kind::Item => {}
        }
        while kind_of(self.peek()) == kind {
            self.at += 1;
        }
        let text = String::from_utf8_lossy(&self.text[start..self.at]).into_owned();
        if kind == Kind::Item {
            // libtraceevent's work-around for old kernels whose mac80211 formats kept
            // these macro names unexpanded.
            let forced = match text.as_str() {
                "LOCAL_PR_FMT" => Some("%s "),
                "STA_PR_FMT" => Some(" sta:%pM "),
                "VIF_PR_FMT" => Some(" vif:%p(%d) "),
                _ => None,
            };
            if let Some(f) = forced {
                return Ok(tok(Kind::DQuote, f));
            }
        }
        Ok(Token { kind, text })
    }

    /// A quoted string or character: up to the closing quote not preceded by a
    /// backslash; adjacent double-quoted strings are joined. As in libtraceevent, `\\`
    /// does not stop the next quote from being escaped (its "cancel" only lasts one
    /// character).
    fn quoted(&mut self, kind: Kind, quote: u8) -> Result<Token, LexError> {
        let mut text = vec![];
        let mut ch = quote;
        loop {
            loop {
                let mut last = ch;
                ch = self.next_char().ok_or(LexError::Unterminated)?;
                if ch == b'\\' && last == b'\\' {
                    last = 0;
                }
                if ch == quote && last != b'\\' {
                    break;
                }
                text.push(ch);
            }
            if kind != Kind::DQuote {
                break;
            }
            let save = self.at;
            let mut next = self.next_char();
            while next.is_some_and(is_space) {
                next = self.next_char();
            }
            if next == Some(b'"') {
                ch = b'"';
                continue;
            }
            self.at = save;
            break;
        }
        Ok(Token {
            kind,
            text: String::from_utf8_lossy(&text).into_owned(),
        })
    }

    /// The next token that is not a space (`read_token`).
    pub(crate) fn token(&mut self) -> Result<Token, LexError> {
        loop {
            let t = self.raw_token()?;
            if t.kind != Kind::Space {
                return Ok(t);
            }
        }
    }

    /// The next token that is neither a space nor a newline (`read_token_item`).
    pub(crate) fn token_item(&mut self) -> Result<Token, LexError> {
        loop {
            let t = self.raw_token()?;
            if t.kind != Kind::Space && t.kind != Kind::Newline {
                return Ok(t);
            }
        }
    }
}

fn tok(kind: Kind, text: &str) -> Token {
    Token {
        kind,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(Kind, String)> {
        let mut l = Lexer::new(text.as_bytes());
        let mut out = vec![];
        loop {
            let t = l.token().unwrap();
            if t.kind == Kind::None {
                return out;
            }
            out.push((t.kind, t.text));
        }
    }

    #[test]
    fn operators_group_as_in_libtraceevent() {
        let toks: Vec<String> = all("a->b >>= c<<d != e&&f || g-- -h ==i <=j ?k:l[0]")
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(
            toks,
            [
                "a", "->", "b", ">>=", "c", "<<", "d", "!=", "e", "&&", "f", "||", "g", "--", "-",
                "h", "==", "i", "<=", "j", "?", "k", ":", "l", "[", "0", "]"
            ]
        );
    }

    #[test]
    fn strings_join_and_keep_escapes() {
        let t = all(r#""a\"b" "c" 'x' "\n""#);
        assert_eq!(t[0], (Kind::DQuote, r#"a\"bc"#.to_string()));
        assert_eq!(t[2], (Kind::DQuote, r"\n".to_string()));
        // `\\` then a quote: the quote is still escaped (libtraceevent's loop).
        let t = all(r#""a\\" b" c"#);
        assert_eq!(t[0], (Kind::DQuote, r#"a\\" b"#.to_string()));
        let t = all(r#"'\'' 1UL"#);
        assert_eq!(t[0], (Kind::SQuote, r"\'".to_string()));
        assert_eq!(t[1], (Kind::Item, "1UL".to_string()));
    }

    #[test]
    fn unterminated_string_is_an_error() {
        let mut l = Lexer::new(b"\"abc");
        assert_eq!(l.token(), Err(LexError::Unterminated));
    }
}
