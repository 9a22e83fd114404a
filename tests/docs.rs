//! The pages as tests: every example in `README.md` and `docs/**/*.md` is replayed against a
//! real server with the module, and its replies must be exactly what the page shows.
//!
//! The convention a page follows:
//! - A fenced block tagged `redis` holds an example: lines `> COMMAND arg ...` (arguments split
//!   on spaces; `"..."` quotes one argument holding spaces), each followed by the reply lines in
//!   `redis-cli`'s terminal format (`OK`, `(integer) 1`, `1) "a"`, `(error) ERR ...`, `(nil)`).
//!   A reply line `(integer) ~N` accepts any integer within 5 % of N (for `MEMORY USAGE`,
//!   whose per-key overhead differs between servers by a few bytes).
//! - Every page is replayed on its own server; its `redis` blocks run in page order on one
//!   connection, so a block may use the keys an earlier block of the page made.
//! - A block tagged `syntax` shows a command's form with placeholders; one tagged
//!   `redis-not-replayed` shows an example that needs more than one server (a replica, a
//!   cluster) or hours of input, and the line above the block says why. Neither is replayed.
//! - Any other block (untagged, `sh`, `text`, ...) must not hold a `BF.`/`CF.` command, so an
//!   example cannot slip in unchecked.

pub mod common;

use std::path::{Path, PathBuf};

use common::*;

/// One example command and the reply the page shows for it.
struct Example {
    page: String,
    line: usize,
    command: Vec<String>,
    expected: Vec<String>,
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

fn page_name(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Whether a line of a block not tagged `redis` is a command example all the same.
fn looks_like_command(line: &str) -> bool {
    let line = line.trim_start().trim_start_matches("> ");
    let line = line
        .strip_prefix("redis-cli ")
        .map(|rest| {
            rest.split_whitespace()
                .find(|w| !w.starts_with('-') && w.parse::<u16>().is_err())
                .unwrap_or("")
        })
        .unwrap_or(line);
    let upper = line.to_ascii_uppercase();
    upper.starts_with("BF.") || upper.starts_with("CF.")
}

/// The examples of one page, in page order; panics on a command example outside a `redis` block.
fn examples(path: &Path) -> Vec<Example> {
    let page = page_name(path);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let mut examples: Vec<Example> = Vec::new();
    let mut fence: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(tag) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                None => Some(tag.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        match fence.as_deref() {
            None | Some("syntax") | Some("redis-not-replayed") => {}
            Some("redis") => {
                if let Some(command) = line.strip_prefix("> ") {
                    examples.push(Example {
                        page: page.clone(),
                        line: number,
                        command: split_arguments(command),
                        expected: Vec::new(),
                    });
                } else {
                    let example = examples.last_mut().unwrap_or_else(|| {
                        panic!("{page}:{number}: a reply before any `> command` line")
                    });
                    example.expected.push(line.to_string());
                }
            }
            Some(_) => assert!(
                !looks_like_command(line),
                "{page}:{number}: a command example outside a `redis` block \
                 (tag it `redis` with its replies, or `syntax`/`redis-not-replayed`): {line}"
            ),
        }
    }
    assert!(fence.is_none(), "{page}: a fenced block is not closed");
    examples
}

fn split_arguments(command: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in command.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    arguments.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            _ => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        arguments.push(current);
    }
    arguments
}

/// A reply as `redis-cli` prints it on a terminal (`--no-raw`), one string per line.
fn cli_lines(reply: &Reply) -> Vec<String> {
    let mut out = String::new();
    format_reply(reply, "", &mut out);
    out.lines().map(str::to_string).collect()
}

fn format_reply(reply: &Reply, prefix: &str, out: &mut String) {
    match reply {
        Simple(s) => out.push_str(&format!("{s}\n")),
        Error(s) => out.push_str(&format!("(error) {s}\n")),
        Int(v) => out.push_str(&format!("(integer) {v}\n")),
        Bulk(bytes) => out.push_str(&format!("{}\n", quoted(bytes))),
        Nil | NilArray => out.push_str("(nil)\n"),
        Array(items) if items.is_empty() => out.push_str("(empty array)\n"),
        Array(items) => {
            let width = items.len().to_string().len();
            let nested = format!("{prefix}{}", " ".repeat(width + 2));
            for (i, item) in items.iter().enumerate() {
                let lead = if i == 0 { "" } else { prefix };
                out.push_str(&format!("{lead}{:>width$}) ", i + 1));
                format_reply(item, &nested, out);
            }
        }
        other => panic!("a page shows RESP2 replies only, not {other:?}"),
    }
}

/// A bulk string quoted and escaped as `redis-cli` prints it.
fn quoted(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

/// Whether a reply line matches the page's line: exactly, or within 5 % after `(integer) ~`.
fn line_matches(expected: &str, actual: &str) -> bool {
    if expected == actual {
        return true;
    }
    let (Some(wanted), Some(got)) = (
        expected.split_once("(integer) ~"),
        actual.split_once("(integer) "),
    ) else {
        return false;
    };
    let (Ok(wanted_value), Ok(got_value)) = (wanted.1.parse::<f64>(), got.1.parse::<f64>()) else {
        return false;
    };
    wanted.0 == got.0 && (got_value - wanted_value).abs() <= 0.05 * wanted_value.abs()
}

fn replay(path: &Path) -> (usize, Vec<String>) {
    let examples = examples(path);
    if examples.is_empty() {
        return (0, Vec::new());
    }
    let server = Server::start();
    let mut client = server.client();
    let mut drifted = Vec::new();
    for example in &examples {
        let actual = cli_lines(&client.call(&example.command));
        let same = actual.len() == example.expected.len()
            && example
                .expected
                .iter()
                .zip(&actual)
                .all(|(e, a)| line_matches(e, a));
        if !same {
            drifted.push(format!(
                "{}:{}: > {}\n  the page shows:\n    {}\n  the server answers:\n    {}",
                example.page,
                example.line,
                example.command.join(" "),
                example.expected.join("\n    "),
                actual.join("\n    ")
            ));
        }
    }
    (examples.len(), drifted)
}

#[test]
fn every_example_on_every_page_answers_as_shown() {
    let mut drifted = Vec::new();
    let mut replayed = 0;
    for page in pages() {
        let (count, failures) = replay(&page);
        replayed += count;
        drifted.extend(failures);
    }
    eprintln!("{replayed} examples replayed");
    assert!(
        drifted.is_empty(),
        "{} of {replayed} examples drifted:\n{}",
        drifted.len(),
        drifted.join("\n")
    );
    assert!(replayed > 0, "no `redis` example found");
}

#[test]
fn the_convention_catches_a_drifted_page() {
    let dir = std::env::temp_dir().join(format!("bloomrs-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let page = dir.join("drifted.md");
    let text = "```redis\n> BF.ADD k a\n(integer) 1\n> BF.ADD k a\n(integer) 1\n```\n";
    std::fs::write(&page, text).expect("write the page");
    let (count, drifted) = replay(&page);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(count, 2);
    assert_eq!(drifted.len(), 1, "{drifted:?}");
    assert!(drifted[0].contains("drifted.md:4"), "{drifted:?}");
}

#[test]
fn replies_print_as_redis_cli_prints_them() {
    let info = Array(
        (1..=10)
            .map(|i| {
                if i % 2 == 1 {
                    Simple(format!("f{i}"))
                } else {
                    Int(i)
                }
            })
            .collect(),
    );
    assert_eq!(cli_lines(&info)[0], " 1) f1");
    assert_eq!(cli_lines(&info)[9], "10) (integer) 10");
    let nested = Array(vec![Array(vec![bulk("a"), Nil]), err("ERR x")]);
    assert_eq!(
        cli_lines(&nested),
        ["1) 1) \"a\"", "   2) (nil)", "2) (error) ERR x"]
    );
    assert_eq!(quoted(b"a\"b\x01"), "\"a\\\"b\\x01\"");
    assert!(line_matches("(integer) ~1000", "(integer) 1040"));
    assert!(!line_matches("(integer) ~1000", "(integer) 1060"));
    assert_eq!(split_arguments("SET k \"a b\""), ["SET", "k", "a b"]);
    assert!(looks_like_command("redis-cli -p 6380 BF.ADD k a"));
    assert!(!looks_like_command(
        "redis-cli CONFIG SET bf.bf-compact yes"
    ));
}

/// The `INFO bf` fields a page's table names (every `` `bf_...` `` in a row starting `` | `bf_ ``).
fn documented_info_fields(page: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(page)).expect("the page");
    let mut fields: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("| `bf_"))
        .filter_map(|line| line.split(" | ").next())
        .flat_map(|cell| cell.split('`').skip(1).step_by(2).map(str::to_string))
        .collect();
    fields.sort();
    fields
}

#[test]
fn the_info_bf_table_names_every_field_and_only_those() {
    let server = Server::start();
    let mut client = server.client();
    let Bulk(text) = client.call(&["INFO", "bf"]) else {
        panic!("INFO bf is not a bulk string");
    };
    let mut fields: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|line| line.split_once(':').map(|(name, _)| name.to_string()))
        .collect();
    fields.sort();
    assert_eq!(documented_info_fields("docs/operations.md"), fields);
}

/// The anchor GitHub gives a heading: lower case, spaces to `-`, punctuation dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            !fenced && line.starts_with('#')
        })
        .map(|line| anchor_of(line.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_link_between_pages_finds_its_page_and_heading() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("the page");
        let dir = page.parent().expect("a page's folder");
        for piece in text.split("](").skip(1) {
            let Some(target) = piece.split(')').next() else {
                continue;
            };
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target} (no such file)", page_name(&page)));
            } else if !anchor.is_empty() && !anchors(&path).iter().any(|a| a == anchor) {
                broken.push(format!("{}: {target} (no such heading)", page_name(&page)));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
