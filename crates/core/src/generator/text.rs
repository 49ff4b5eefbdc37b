//! Text-like field values (`valuegenerator=text`): a deterministic stream of
//! product reviews - ids, reviewer names, product codes, star ratings,
//! helpfulness votes, timestamps, a summary and sentences of words drawn from
//! a Zipf-distributed vocabulary - cut into field values of the requested
//! lengths. Random bytes (YCSB's values) hardly compress; real records (the
//! TerarkDB report loaded Amazon reviews) compress a few times over, and block
//! compression, block size and caches behave accordingly. The vocabulary is
//! fixed (the same in every run and process); the stream depends on the seed.
use crate::rng::Rng;
use std::sync::{Arc, OnceLock};

/// Frequent English words, the vocabulary's top ranks in this order.
const COMMON: &[&str] = &[
    "the",
    "and",
    "a",
    "to",
    "of",
    "is",
    "it",
    "i",
    "this",
    "in",
    "that",
    "for",
    "was",
    "with",
    "movie",
    "but",
    "not",
    "you",
    "on",
    "as",
    "have",
    "are",
    "one",
    "film",
    "be",
    "its",
    "all",
    "so",
    "at",
    "they",
    "his",
    "good",
    "great",
    "like",
    "just",
    "very",
    "from",
    "an",
    "story",
    "he",
    "by",
    "or",
    "if",
    "well",
    "more",
    "there",
    "time",
    "has",
    "what",
    "who",
    "about",
    "love",
    "really",
    "my",
    "out",
    "some",
    "see",
    "would",
    "me",
    "do",
    "can",
    "than",
    "her",
    "best",
    "when",
    "also",
    "only",
    "even",
    "much",
    "which",
    "get",
    "first",
    "been",
    "were",
    "watch",
    "other",
    "make",
    "dvd",
    "characters",
    "no",
    "will",
    "had",
    "how",
    "most",
    "up",
    "into",
    "any",
    "better",
    "series",
    "could",
    "these",
    "many",
    "show",
    "after",
    "still",
    "quality",
    "recommend",
    "price",
    "book",
    "product",
    "works",
    "bought",
    "used",
    "little",
];

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br",
    "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "sh", "ch", "th", "sp", "",
];
const NUCLEI: &[&str] = &["a", "e", "i", "o", "u", "ea", "ou", "ai", "ee", "oo", "y"];
const CODAS: &[&str] = &[
    "", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck", "rt", "m", "ll", "ss",
];

/// Words in the vocabulary; rank r has probability proportional to 1/(r+1).
const WORDS: usize = 4096;
/// Names per list (first names, last names).
const NAMES: usize = 512;
/// Phrases in the phrase list.
const PHRASES: usize = 2048;
/// Entries of the sampling table (a quantized inverse CDF).
const TABLE: usize = 1 << 16;

struct Vocabulary {
    words: Vec<String>,
    /// Recurring word sequences ("one of the best"), which make text repeat
    /// itself the way natural language does; drawn with the same 1/rank law.
    phrases: Vec<String>,
    first: Vec<String>,
    last: Vec<String>,
    /// Word rank for each 1/TABLE quantile of the Zipf distribution.
    table: Vec<u16>,
}

fn syllable_word(rng: &mut Rng, syllables: u64) -> String {
    let mut w = String::new();
    for _ in 0..syllables {
        w.push_str(ONSETS[rng.below(ONSETS.len() as u64) as usize]);
        w.push_str(NUCLEI[rng.below(NUCLEI.len() as u64) as usize]);
        w.push_str(CODAS[rng.below(CODAS.len() as u64) as usize]);
    }
    w
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

fn vocabulary() -> Arc<Vocabulary> {
    static V: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    V.get_or_init(|| {
        // a fixed seed: the vocabulary is part of the generator's definition
        let mut rng = Rng::new(0x7465_7874_7665_7273);
        let mut seen = std::collections::HashSet::new();
        let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
        seen.extend(words.iter().cloned());
        while words.len() < WORDS {
            // less frequent words are longer, as in natural language
            let syllables = 1 + rng.below(2) + (words.len() as u64 * 2 / WORDS as u64);
            let w = syllable_word(&mut rng, syllables);
            if w.len() > 1 && seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut names = |n: usize| -> Vec<String> {
            (0..n)
                .map(|_| capitalized(&syllable_word(&mut rng, 2)))
                .collect()
        };
        let first = names(NAMES);
        let last = names(NAMES);
        let weights: Vec<f64> = (0..WORDS).map(|r| 1.0 / (r as f64 + 1.0)).collect();
        let total: f64 = weights.iter().sum();
        let mut table = Vec::with_capacity(TABLE);
        let mut cum = 0.0;
        let mut rank = 0usize;
        for q in 0..TABLE {
            let target = (q as f64 + 0.5) / TABLE as f64 * total;
            while rank + 1 < WORDS && cum + weights[rank] < target {
                cum += weights[rank];
                rank += 1;
            }
            table.push(rank as u16);
        }
        let phrases = (0..PHRASES)
            .map(|_| {
                let n = 2 + rng.below(4);
                (0..n)
                    .map(|_| words[table[(rng.next_u64() >> 48) as usize] as usize].as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Arc::new(Vocabulary {
            words,
            phrases,
            first,
            last,
            table,
        })
    })
    .clone()
}

/// A stream of review text; `fill` hands out its next bytes.
#[derive(Clone)]
pub(crate) struct TextFiller {
    vocab: Arc<Vocabulary>,
    rng: Rng,
    pending: Vec<u8>,
    pos: usize,
    /// Review timestamps advance like a crawl of a review site.
    time: u64,
}

impl std::fmt::Debug for TextFiller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextFiller").finish_non_exhaustive()
    }
}

const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

impl TextFiller {
    pub(crate) fn new(rng: &mut Rng) -> Self {
        let seed = rng.next_u64();
        TextFiller {
            vocab: vocabulary(),
            rng: Rng::new(seed),
            pending: Vec::with_capacity(4096),
            pos: 0,
            time: 946_684_800 + seed % 400_000_000,
        }
    }

    /// Fills `buf` (its length is the field length) with the next text.
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            if self.pos == self.pending.len() {
                self.pending.clear();
                self.pos = 0;
                self.review();
            }
            let n = (buf.len() - done).min(self.pending.len() - self.pos);
            buf[done..done + n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
            done += n;
            self.pos += n;
        }
    }

    fn word(&mut self) -> &str {
        let r = self.vocab.table[(self.rng.next_u64() >> 48) as usize] as usize;
        &self.vocab.words[r]
    }

    fn code(&mut self, prefix: &str, len: usize) {
        self.pending.extend_from_slice(prefix.as_bytes());
        for _ in 0..len {
            let c = ALNUM[self.rng.below(ALNUM.len() as u64) as usize];
            self.pending.push(c);
        }
    }

    fn words(&mut self, n: u64, capital: bool) {
        let vocab = self.vocab.clone();
        for i in 0..n {
            if i > 0 {
                self.pending.push(b' ');
            }
            let x = self.rng.next_u64();
            let r = vocab.table[(x >> 48) as usize] as usize;
            // half the tokens are recurring phrases (ranks share the word table's
            // law, folded onto the phrase list)
            let w = if x & 1 == 0 {
                vocab.phrases[r % PHRASES].as_bytes()
            } else {
                vocab.words[r].as_bytes()
            };
            if i == 0 && capital {
                self.pending.push(w[0].to_ascii_uppercase());
                self.pending.extend_from_slice(&w[1..]);
            } else {
                self.pending.extend_from_slice(w);
            }
        }
    }

    /// Appends one review record to the pending text.
    fn review(&mut self) {
        let v = self.vocab.clone();
        self.code("{\"review_id\":\"R", 13);
        self.code("\",\"product_id\":\"B00", 7);
        let first = &v.first[self.rng.below(NAMES as u64) as usize];
        let last = &v.last[self.rng.below(NAMES as u64) as usize];
        let stars = [5, 5, 5, 4, 4, 3, 2, 1][self.rng.below(8) as usize];
        let votes = self.rng.below(40);
        let helpful = if votes == 0 {
            0
        } else {
            self.rng.below(votes + 1)
        };
        self.time += self.rng.below(86_400);
        let head = format!(
            "\",\"reviewer\":\"{first} {last}\",\"stars\":{stars},\"helpful\":\"{helpful}/{votes}\",\"time\":{},\"summary\":\"",
            self.time
        );
        self.pending.extend_from_slice(head.as_bytes());
        let n = 2 + self.rng.below(6);
        self.words(n, true);
        self.pending.extend_from_slice(b"\",\"text\":\"");
        for s in 0..(2 + self.rng.below(9)) {
            if s > 0 {
                self.pending.push(b' ');
            }
            let n = 5 + self.rng.below(16);
            self.words(n, true);
            // a comma now and then, then the sentence's end
            if self.rng.below(3) == 0 {
                self.pending.push(b',');
                self.pending.push(b' ');
                let w = self.word().to_string();
                self.pending.extend_from_slice(w.as_bytes());
            }
            self.pending
                .push([b'.', b'.', b'.', b'.', b'!', b'?'][self.rng.below(6) as usize]);
        }
        self.pending.extend_from_slice(b"\"}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(seed: u64, n: usize) -> Vec<u8> {
        let mut f = TextFiller::new(&mut Rng::new(seed));
        let mut out = vec![0u8; n];
        for chunk in out.chunks_mut(100) {
            f.fill(chunk);
        }
        out
    }

    #[test]
    fn the_stream_is_deterministic_per_seed_printable_and_review_shaped() {
        let a = text(7, 20_000);
        assert_eq!(a, text(7, 20_000));
        assert_ne!(a, text(8, 20_000));
        assert!(a
            .iter()
            .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == b'\n'));
        let s = String::from_utf8(a).unwrap();
        for field in [
            "\"review_id\":\"R",
            "\"stars\":",
            "\"reviewer\":",
            "\"text\":\"",
        ] {
            assert!(s.contains(field), "{field} missing");
        }
    }

    #[test]
    fn word_frequencies_follow_zipf() {
        let s = String::from_utf8(text(1, 400_000)).unwrap();
        let mut counts = std::collections::HashMap::new();
        let mut total = 0u64;
        for w in s
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_lowercase()))
        {
            *counts.entry(w.to_string()).or_insert(0u64) += 1;
            total += 1;
        }
        let mut by_count: Vec<u64> = counts.values().copied().collect();
        by_count.sort_unstable_by(|a, b| b.cmp(a));
        // with 1/rank weights over 8192 words, rank 1 is about 1/9.6 of all
        // words and rank 10 about a tenth of rank 1
        let top = by_count[0] as f64 / total as f64;
        assert!((0.06..0.16).contains(&top), "top word share {top}");
        let ratio = by_count[0] as f64 / by_count[9] as f64;
        assert!((5.0..20.0).contains(&ratio), "rank 1 / rank 10 = {ratio}");
        assert!(counts.len() > 2000, "vocabulary used: {}", counts.len());
    }
}
