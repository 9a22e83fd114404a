//! COMMAND DOCS, INFO and configuration: the module's commands and values are visible like
//! built-in ones.
mod common;

use common::*;

const COMMANDS: [&str; 25] = [
    "bf.reserve",
    "bf.add",
    "bf.madd",
    "bf.insert",
    "bf.exists",
    "bf.mexists",
    "bf.info",
    "bf.card",
    "bf.debug",
    "bf.scandump",
    "bf.loadchunk",
    "cf.reserve",
    "cf.add",
    "cf.addnx",
    "cf.insert",
    "cf.insertnx",
    "cf.exists",
    "cf.mexists",
    "cf.count",
    "cf.del",
    "cf.compact",
    "cf.info",
    "cf.debug",
    "cf.scandump",
    "cf.loadchunk",
];

/// A RESP2 flat list of pairs, as a lookup.
fn field(reply: &[Reply], name: &str) -> Option<Reply> {
    reply
        .chunks(2)
        .find(|pair| pair[0] == bulk(name))
        .map(|pair| pair[1].clone())
}

#[test]
fn command_docs_for_every_command() {
    let s = Server::start();
    let mut c = s.client();
    for name in COMMANDS {
        let docs = call!(c, "COMMAND", "DOCS", name).array();
        assert_eq!(docs[0], bulk(name));
        let doc = docs[1].array();
        assert_eq!(field(&doc, "group"), Some(bulk("module")), "{name}");
        assert_eq!(field(&doc, "module"), Some(bulk("bf")), "{name}");
        assert!(
            matches!(field(&doc, "summary"), Some(Bulk(s)) if s.len() > 10),
            "{name}"
        );
        assert!(
            matches!(field(&doc, "complexity"), Some(Bulk(s)) if s.starts_with(b"O(")),
            "{name}"
        );
        let arguments = field(&doc, "arguments").unwrap().array();
        let key = arguments[0].array();
        assert_eq!(
            key[..6],
            [
                bulk("name"),
                bulk("key"),
                bulk("type"),
                bulk("key"),
                bulk("key_spec_index"),
                Int(0)
            ],
            "{name}"
        );
    }
    let add = call!(c, "COMMAND", "DOCS", "bf.add").array()[1].array();
    assert_eq!(
        field(&add, "summary"),
        Some(bulk("Adds an item to a Bloom Filter"))
    );
    assert_eq!(field(&add, "since"), Some(bulk("1.0.0")));
    assert_eq!(
        field(&add, "arguments"),
        Some(Array(vec![
            Array(vec![
                bulk("name"),
                bulk("key"),
                bulk("type"),
                bulk("key"),
                bulk("key_spec_index"),
                Int(0)
            ]),
            Array(vec![
                bulk("name"),
                bulk("item"),
                bulk("type"),
                bulk("string")
            ]),
        ]))
    );
    let info = call!(c, "COMMAND", "DOCS", "bf.info").array()[1].array();
    let single = field(&info, "arguments").unwrap().array()[1].array();
    assert_eq!(
        single[..6],
        [
            bulk("name"),
            bulk("single_value"),
            bulk("type"),
            bulk("oneof"),
            bulk("flags"),
            Array(vec![Simple("optional".into())])
        ]
    );
    let choices = single[7].array();
    assert_eq!(choices.len(), 5);
    assert_eq!(
        choices[0].array()[..6],
        [
            bulk("name"),
            bulk("capacity"),
            bulk("type"),
            bulk("pure-token"),
            bulk("token"),
            bulk("CAPACITY")
        ]
    );
    // The docs leave the legacy key spec and arity in place.
    let command = call!(c, "COMMAND", "INFO", "cf.insert").array()[0].array();
    assert_eq!(command[1], Int(-1));
    assert_eq!(
        call!(c, "COMMAND", "GETKEYS", "cf.insert", "k", "ITEMS", "a"),
        Array(vec![bulk("k")])
    );
}
