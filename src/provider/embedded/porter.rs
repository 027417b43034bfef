//! FTS5's `porter` stemmer over one ASCII token, rule for rule, so that the term index can
//! stem ASCII text without asking FTS5 (whose `porter unicode61` tokenizer stays the
//! authority: `the_stemmer_agrees_with_fts5` holds the two equal).
//!
//! FTS5 stems a token of 3 to 64 bytes, as `unicode61` made it (lower case letters and
//! digits here), with Martin Porter's algorithm in SQLite's reading of it: `y` is a vowel
//! after a consonant, a rule fires on the longest suffix of its step that matches (the
//! stem before it never empty), and that suffix's condition alone decides whether the
//! step changes the word. Tokens outside those lengths pass unchanged.

use std::borrow::Cow;

/// Tokens longer than this (in bytes) are not stemmed.
const MAX_TOKEN: usize = 64;
/// Tokens shorter than this are not stemmed.
const MIN_TOKEN: usize = 3;

/// A step's condition on the stem left before a suffix.
#[derive(Clone, Copy)]
enum Cond {
    /// `m > 0`.
    MGt0,
    /// `m > 1`.
    MGt1,
    /// `m > 1` and the stem ends in `s` or `t`.
    MGt1SOrT,
    /// The stem holds a vowel (`*v*`).
    Vowel,
}

/// `(suffix, condition, replacement)`, each step's rules in the order tried: the first
/// suffix that matches is the only one whose condition is asked.
type Rule = (&'static str, Cond, &'static str);

const STEP_1B: &[Rule] = &[
    ("eed", Cond::MGt0, "ee"),
    ("ed", Cond::Vowel, ""),
    ("ing", Cond::Vowel, ""),
];

const STEP_2: &[Rule] = &[
    ("ational", Cond::MGt0, "ate"),
    ("tional", Cond::MGt0, "tion"),
    ("enci", Cond::MGt0, "ence"),
    ("anci", Cond::MGt0, "ance"),
    ("izer", Cond::MGt0, "ize"),
    ("logi", Cond::MGt0, "log"),
    ("bli", Cond::MGt0, "ble"),
    ("alli", Cond::MGt0, "al"),
    ("entli", Cond::MGt0, "ent"),
    ("eli", Cond::MGt0, "e"),
    ("ousli", Cond::MGt0, "ous"),
    ("ization", Cond::MGt0, "ize"),
    ("ation", Cond::MGt0, "ate"),
    ("ator", Cond::MGt0, "ate"),
    ("alism", Cond::MGt0, "al"),
    ("iveness", Cond::MGt0, "ive"),
    ("fulness", Cond::MGt0, "ful"),
    ("ousness", Cond::MGt0, "ous"),
    ("aliti", Cond::MGt0, "al"),
    ("iviti", Cond::MGt0, "ive"),
    ("biliti", Cond::MGt0, "ble"),
];

const STEP_3: &[Rule] = &[
    ("ical", Cond::MGt0, "ic"),
    ("ness", Cond::MGt0, ""),
    ("icate", Cond::MGt0, "ic"),
    ("iciti", Cond::MGt0, "ic"),
    ("ful", Cond::MGt0, ""),
    ("ative", Cond::MGt0, ""),
    ("alize", Cond::MGt0, "al"),
];

const STEP_4: &[Rule] = &[
    ("al", Cond::MGt1, ""),
    ("ance", Cond::MGt1, ""),
    ("ence", Cond::MGt1, ""),
    ("er", Cond::MGt1, ""),
    ("ic", Cond::MGt1, ""),
    ("able", Cond::MGt1, ""),
    ("ible", Cond::MGt1, ""),
    ("ant", Cond::MGt1, ""),
    ("ement", Cond::MGt1, ""),
    ("ment", Cond::MGt1, ""),
    ("ent", Cond::MGt1, ""),
    ("ion", Cond::MGt1SOrT, ""),
    ("ou", Cond::MGt1, ""),
    ("ism", Cond::MGt1, ""),
    ("ate", Cond::MGt1, ""),
    ("iti", Cond::MGt1, ""),
    ("ous", Cond::MGt1, ""),
    ("ive", Cond::MGt1, ""),
    ("ize", Cond::MGt1, ""),
];

/// Step 1b's second part: `(suffix, replacement)`, applied only after `ed` or `ing` went.
const STEP_1B2: &[(&str, &str)] = &[("at", "ate"), ("bl", "ble"), ("iz", "ize")];

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// The length of the stem's first vowel-consonant sequence (`VC`), consonant flags
/// continuing from `prev_cons`; 0 when there is none.
fn gobble_vc(stem: &[u8], prev_cons: bool) -> usize {
    let mut cons = prev_cons;
    let mut i = 0;
    while i < stem.len() {
        cons = !is_vowel(stem[i], cons);
        if !cons {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < stem.len() {
        cons = !is_vowel(stem[i], cons);
        if cons {
            return i + 1;
        }
        i += 1;
    }
    0
}

fn m_gt0(stem: &[u8]) -> bool {
    gobble_vc(stem, false) != 0
}

fn m_gt1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) != 0
}

fn m_eq1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) == 0
}

/// `*o`: the stem ends consonant-vowel-consonant, the last not `w`, `x` or `y`.
fn o_star(stem: &[u8]) -> bool {
    match stem.last() {
        None | Some(b'w' | b'x' | b'y') => false,
        Some(_) => {
            let mut mask = 0u32;
            let mut cons = false;
            for &c in stem {
                cons = !is_vowel(c, cons);
                mask = (mask << 1) | u32::from(cons);
            }
            mask & 0b111 == 0b101
        }
    }
}

/// `*v*`: a vowel anywhere (`y` counts past the first letter).
fn has_vowel(stem: &[u8]) -> bool {
    stem.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

fn holds(cond: Cond, stem: &[u8]) -> bool {
    match cond {
        Cond::MGt0 => m_gt0(stem),
        Cond::MGt1 => m_gt1(stem),
        Cond::MGt1SOrT => matches!(stem.last(), Some(b's' | b't')) && m_gt1(stem),
        Cond::Vowel => has_vowel(stem),
    }
}

/// Applies the first rule of `rules` whose suffix ends `word` (with a stem before it);
/// the rule's index when its condition held and it was applied.
fn step(word: &mut Vec<u8>, rules: &[Rule]) -> Option<usize> {
    let (index, &(suffix, cond, replacement)) = rules
        .iter()
        .enumerate()
        .find(|(_, rule)| word.len() > rule.0.len() && word.ends_with(rule.0.as_bytes()))?;
    let stem = word.len() - suffix.len();
    if !holds(cond, &word[..stem]) {
        return None;
    }
    word.truncate(stem);
    word.extend_from_slice(replacement.as_bytes());
    Some(index)
}

/// Step 1a: plurals.
fn step_1a(word: &mut Vec<u8>) {
    let n = word.len();
    if word[n - 1] != b's' {
        return;
    }
    if word[n - 2] == b'e' {
        let sses = n > 4 && word[n - 4] == b's' && word[n - 3] == b's';
        let ies = n > 3 && word[n - 3] == b'i';
        word.truncate(if sses || ies { n - 2 } else { n - 1 });
    } else if word[n - 2] != b's' {
        word.truncate(n - 1);
    }
}

/// Step 1b: `eed`, `ed`, `ing`, then what their removal leaves.
fn step_1b(word: &mut Vec<u8>) {
    // Only the removal of `ed` or `ing` (not `eed` becoming `ee`) goes on.
    if !matches!(step(word, STEP_1B), Some(1 | 2)) {
        return;
    }
    let n = word.len();
    if let Some(&(suffix, replacement)) = STEP_1B2
        .iter()
        .find(|(suffix, _)| n > suffix.len() && word.ends_with(suffix.as_bytes()))
    {
        word.truncate(n - suffix.len());
        word.extend_from_slice(replacement.as_bytes());
        return;
    }
    let c = word[n - 1];
    if n >= 2 && !is_vowel(c, false) && !matches!(c, b'l' | b's' | b'z') && c == word[n - 2] {
        word.truncate(n - 1);
    } else if m_eq1(word) && o_star(word) {
        word.push(b'e');
    }
}

/// The stem FTS5's `porter` tokenizer makes of `token` (lower-case ASCII letters and
/// digits): borrowed when it is the token or a prefix of it.
pub fn stem(token: &str) -> Cow<'_, str> {
    let bytes = token.as_bytes();
    if bytes.len() > MAX_TOKEN || bytes.len() < MIN_TOKEN || !token.is_ascii() {
        return Cow::Borrowed(token);
    }
    let mut word = bytes.to_vec();
    step_1a(&mut word);
    step_1b(&mut word);
    // Step 1c.
    let n = word.len();
    if word[n - 1] == b'y' && has_vowel(&word[..n - 1]) {
        word[n - 1] = b'i';
    }
    step(&mut word, STEP_2);
    step(&mut word, STEP_3);
    step(&mut word, STEP_4);
    // Step 5a.
    let n = word.len();
    if word[n - 1] == b'e' {
        let stem = &word[..n - 1];
        if m_gt1(stem) || (m_eq1(stem) && !o_star(stem)) {
            word.truncate(n - 1);
        }
    }
    // Step 5b.
    let n = word.len();
    if n > 1 && word[n - 1] == b'l' && word[n - 2] == b'l' && m_gt1(&word[..n - 1]) {
        word.truncate(n - 1);
    }
    if bytes.starts_with(&word) {
        return Cow::Borrowed(&token[..word.len()]);
    }
    // Every byte came from the token or a rule's ASCII replacement.
    Cow::Owned(word.into_iter().map(char::from).collect())
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn porters_examples_stem_as_his_paper_says() {
        for (word, expected) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("generalization", "gener"),
            ("validating", "valid"),
            ("validate", "valid"),
            ("controllable", "control"),
            ("v2", "v2"),
            ("abc123s", "abc123"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn a_stem_is_borrowed_when_it_is_a_prefix() {
        assert!(matches!(stem("cats"), std::borrow::Cow::Borrowed("cat")));
        assert!(matches!(
            stem("relational"),
            std::borrow::Cow::Borrowed("relat")
        ));
        assert!(matches!(stem("happy"), std::borrow::Cow::Owned(_)));
        let long = "a".repeat(65) + "s";
        assert_eq!(stem(&long), long.as_str());
    }
}
