//! The rooms' import rule, checked on the source: every path a file of `src/module/` names
//! (`use super::…`, `use crate::module::…`, a child of a `mod.rs`, or such a path written
//! inline) is resolved to the file it lands in, and the check fails on an arrow running back up
//! the layer order (`ffi/raw.rs` < `state/` < `ffi/` < `types/` < `kinds/` < `commands/` <
//! `mod.rs`) or on an import cycle between files. Handler files of `commands/` may not name a
//! kind's file either: they reach the kinds through `kinds/mod.rs` only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The rooms, bottom first. `raw` is `ffi/raw.rs`; `module` is `src/module/mod.rs`.
const ORDER: [&str; 7] = [
    "raw", "state", "ffi", "types", "kinds", "commands", "module",
];

/// A file as a module path below `module`: `["kinds", "sparse"]`, `["kinds"]` for its
/// `mod.rs`, `[]` for `src/module/mod.rs`.
type ModPath = Vec<String>;

fn room(file: &ModPath) -> &str {
    match file.as_slice() {
        [] => "module",
        [ffi, raw] if ffi == "ffi" && raw == "raw" => "raw",
        [first, ..] => first,
    }
}

fn rank(file: &ModPath) -> usize {
    let room = room(file);
    ORDER.iter().position(|r| *r == room).unwrap_or(usize::MAX)
}

fn module_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/module")
}

/// Every source file below `src/module`, by module path (this check itself excepted).
fn files(dir: &Path, prefix: &ModPath, out: &mut BTreeMap<ModPath, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let mut module = prefix.clone();
        if path.is_dir() {
            module.push(name);
            files(&path, &module, out);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "layers" {
            if name != "mod" {
                module.push(name);
            }
            out.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The code of a file without its comments, one string.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (head, rest) = tree.split_at(open);
    let inner = &rest[1..rest.len() - 1];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{head}{p}")))
        .collect()
}

/// Every module path the code names: `use` trees, then paths written inline.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let tail = &rest[at + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            out.extend(expand(&tail[..end]));
        }
        rest = &tail[end..];
    }
    for start in ["crate::module::", "super::"] {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    out
}

/// The file a path named in `from` lands in, if it is one of `files`.
fn resolve(from: &ModPath, is_mod: bool, path: &str, files: &BTreeSet<ModPath>) -> Option<ModPath> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    // Paths start in the file's own module; each `super` climbs one.
    let mut base: ModPath = from.clone();
    match segments.first().copied() {
        Some("crate") if segments.get(1) == Some(&"module") => {
            base = Vec::new();
            segments.drain(..2);
        }
        Some("crate") | Some("std") | Some("redis_module") | Some("core") => return None,
        Some("self") => {
            segments.remove(0);
        }
        Some("super") => {
            while segments.first() == Some(&"super") {
                base.pop()?;
                segments.remove(0);
            }
        }
        // A bare path: a child module of a mod.rs, or an outside crate.
        _ if !is_mod => return None,
        _ => {}
    }
    let mut found = None;
    let mut module = base;
    if files.contains(&module) {
        found = Some(module.clone());
    }
    for segment in segments {
        module.push(segment.to_string());
        if files.contains(&module) {
            found = Some(module.clone());
        } else {
            break;
        }
    }
    found
}

/// The arrows between files: from each file to every other file it names.
fn graph() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut sources = BTreeMap::new();
    files(&module_dir(), &Vec::new(), &mut sources);
    let known: BTreeSet<ModPath> = sources.keys().cloned().collect();
    let dirs: BTreeSet<ModPath> = known
        .iter()
        .filter(|f| {
            known
                .iter()
                .any(|g| g.len() == f.len() + 1 && g.starts_with(f))
        })
        .cloned()
        .collect();
    sources
        .iter()
        .map(|(file, text)| {
            let is_mod = dirs.contains(file);
            let targets = paths(&code(text))
                .iter()
                .filter_map(|path| resolve(file, is_mod, path, &known))
                .filter(|target| target != file)
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// The first cycle found, as the files along it.
fn cycle(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    fn visit(
        node: &ModPath,
        graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        done: &mut BTreeSet<ModPath>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(stack[at..].to_vec());
        }
        if !done.insert(node.clone()) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, done, stack) {
                return Some(found);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(file: &ModPath) -> String {
        format!("module/{}", file.join("/"))
    }

    #[test]
    fn every_room_is_known_and_arrows_run_down() {
        let graph = graph();
        assert!(graph.len() > 30, "the check reads the sources");
        let mut wrong = Vec::new();
        for (file, targets) in &graph {
            assert!(rank(file) < ORDER.len(), "{} is in no room", name(file));
            for target in targets {
                if rank(target) > rank(file) {
                    wrong.push(format!("{} -> {}", name(file), name(target)));
                }
            }
        }
        assert!(wrong.is_empty(), "arrows up the layers: {wrong:#?}");
        assert!(graph[&vec!["ffi".to_string(), "raw".to_string()]].is_empty());
    }

    #[test]
    fn no_import_cycle() {
        let found = cycle(&graph()).map(|files| files.iter().map(name).collect::<Vec<_>>());
        assert_eq!(found, None);
    }

    #[test]
    fn handlers_never_name_a_kind_file() {
        let graph = graph();
        let kinds = vec!["kinds".to_string()];
        for (file, targets) in &graph {
            if room(file) != "commands" || file.last().is_some_and(|f| f == "table") {
                continue;
            }
            for target in targets {
                let kind_file = target.starts_with(&kinds) && target.len() > 1;
                let shared = target.last().is_some_and(|f| f == "write");
                assert!(!kind_file || shared, "{} -> {}", name(file), name(target));
            }
        }
    }

    #[test]
    fn the_check_sees_what_it_should() {
        let files: BTreeSet<ModPath> = [
            vec![],
            vec!["kinds".into()],
            vec!["kinds".into(), "plain".into()],
        ]
        .into_iter()
        .collect();
        let plain: ModPath = vec!["kinds".into(), "plain".into()];
        let kinds: ModPath = vec!["kinds".into()];
        assert_eq!(
            expand("super::{a, b::{c, d}}"),
            ["super::a", "super::b::c", "super::b::d"]
        );
        assert_eq!(
            resolve(&plain, false, "super::Write", &files),
            Some(kinds.clone())
        );
        assert_eq!(
            resolve(&kinds, true, "plain::BLOOM_TYPE", &files),
            Some(plain.clone())
        );
        assert_eq!(
            resolve(&kinds, true, "crate::module::kinds::plain::X", &files),
            Some(plain.clone())
        );
        assert_eq!(resolve(&plain, false, "crate::bloom::Chain", &files), None);
        let looped = BTreeMap::from([
            (kinds.clone(), BTreeSet::from([plain.clone()])),
            (plain.clone(), BTreeSet::from([kinds.clone()])),
        ]);
        assert!(cycle(&looped).is_some());
    }
}
