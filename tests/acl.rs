//! ACL categories: on servers whose module API has module-defined categories (Valkey 8, Redis
//! 7.4 and later) every command is in `@bloom` or `@cuckoo` plus the read/write/fast
//! categories RedisBloom 8 gives it, and a user's `+@bloom` grants Bloom commands only. On Redis
//! 7.0 the module loads without them and the categories stay unknown.
pub mod common;

use common::*;

/// RedisBloom 8's categories of each command (besides the family).
const EXPECTED: &[(&str, &[&str])] = &[
    ("bf.add", &["@write"]),
    ("bf.card", &["@fast", "@read"]),
    ("bf.debug", &["@read"]),
    ("bf.exists", &["@read"]),
    ("bf.freeze", &["@write"]),
    ("bf.info", &["@fast", "@read"]),
    ("bf.insert", &["@write"]),
    ("bf.loadchunk", &["@write"]),
    ("bf.madd", &["@write"]),
    ("bf.mexists", &["@read"]),
    ("bf.promote", &["@write"]),
    ("bf.reserve", &["@fast", "@write"]),
    ("bf.scandump", &["@read"]),
    ("cf.add", &["@write"]),
    ("cf.addnx", &["@write"]),
    ("cf.compact", &["@read"]),
    ("cf.count", &["@read"]),
    ("cf.debug", &["@read"]),
    ("cf.del", &["@write"]),
    ("cf.exists", &["@read"]),
    ("cf.info", &["@fast", "@read"]),
    ("cf.insert", &["@write"]),
    ("cf.insertnx", &["@write"]),
    ("cf.loadchunk", &["@write"]),
    ("cf.mexists", &["@read"]),
    ("cf.reserve", &["@fast", "@write"]),
    ("cf.scandump", &["@read"]),
];

fn family(command: &str) -> &'static str {
    if command.starts_with("bf.") {
        "@bloom"
    } else {
        "@cuckoo"
    }
}

#[test]
fn commands_are_in_their_family_category() {
    let s = Server::start();
    let mut c = s.client();
    let server = server_info(&mut c);
    let commands = module_commands(&mut c);
    assert!(commands.len() >= EXPECTED.len(), "{commands:?}");
    if !server.has_module_acl_categories() {
        assert_eq!(
            call!(c, "ACL", "CAT", "bloom"),
            err("ERR Unknown category 'bloom'")
        );
        let categories = call!(c, "ACL", "CAT").array();
        assert!(!categories.contains(&bulk("bloom")) && !categories.contains(&bulk("cuckoo")));
        println!(
            "{server} has no module ACL categories: checked that the module loads without them"
        );
        return;
    }
    let categories = call!(c, "ACL", "CAT").array();
    assert!(categories.contains(&bulk("bloom")), "{categories:?}");
    assert!(categories.contains(&bulk("cuckoo")), "{categories:?}");

    // Every command, including ones added after this test was written, is in its family.
    for command in &commands {
        let got = command_acl_categories(&mut c, command);
        assert!(
            got.contains(&family(command).to_string()),
            "{command}: {got:?}"
        );
        if let Some((_, rest)) = EXPECTED.iter().find(|(name, _)| name == command) {
            let mut expected: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            expected.push(family(command).to_string());
            expected.sort();
            assert_eq!(got, expected, "{command}");
        }
    }

    // `ACL CAT bloom` lists every BF.* command. Valkey 8.0.1's ACL CAT leaves module commands
    // out of every category (fixed in Valkey after 8.0.1): there the categories are checked
    // through COMMAND INFO above and ACL DRYRUN below.
    let listed = |c: &mut Client, category: &str| -> Vec<String> {
        let mut names: Vec<String> = call!(c, "ACL", "CAT", category)
            .array()
            .iter()
            .map(|n| n.text().to_ascii_lowercase())
            .collect();
        names.sort();
        names
    };
    let lists_modules = listed(&mut c, "write").iter().any(|n| n == "bf.add");
    if lists_modules {
        let bloom: Vec<String> = commands
            .iter()
            .filter(|n| n.starts_with("bf."))
            .cloned()
            .collect();
        let cuckoo: Vec<String> = commands
            .iter()
            .filter(|n| n.starts_with("cf."))
            .cloned()
            .collect();
        assert_eq!(listed(&mut c, "bloom"), bloom);
        assert_eq!(listed(&mut c, "cuckoo"), cuckoo);
    } else {
        println!(
            "{server}: ACL CAT lists no module command in any category (a server bug fixed \
             after Valkey 8.0.1); ACL CAT bloom not compared, COMMAND INFO and ACL DRYRUN checked"
        );
    }

    // A user allowed @bloom runs every BF.* command and no CF.* command.
    assert_eq!(
        call!(c, "ACL", "SETUSER", "bloomer", "on", ">secret", "~*", "+@bloom"),
        ok()
    );
    for command in &commands {
        let reply = call!(c, "ACL", "DRYRUN", "bloomer", command.as_str(), "k", "x");
        if command.starts_with("bf.") {
            assert_eq!(reply, ok(), "{command}");
        } else {
            let denied = format!("User bloomer has no permissions to run the '{command}' command");
            assert_eq!(reply, bulk(denied), "{command}");
        }
    }
    let mut user = s.client();
    assert_eq!(call!(user, "AUTH", "bloomer", "secret"), ok());
    assert_eq!(call!(user, "BF.ADD", "b", "x"), Int(1));
    assert_eq!(call!(user, "BF.EXISTS", "b", "x"), Int(1));
    let denied = call!(user, "CF.ADD", "c", "x");
    assert_eq!(
        denied,
        err("NOPERM User bloomer has no permissions to run the 'cf.add' command")
    );
    assert_eq!(call!(c, "EXISTS", "c"), Int(0));

    // And the other way round.
    assert_eq!(
        call!(c, "ACL", "SETUSER", "cuckooer", "on", ">secret", "~*", "+@cuckoo"),
        ok()
    );
    let mut user = s.client();
    assert_eq!(call!(user, "AUTH", "cuckooer", "secret"), ok());
    assert_eq!(call!(user, "CF.ADD", "c", "x"), Int(1));
    assert_eq!(
        call!(user, "BF.ADD", "b", "y"),
        err("NOPERM User cuckooer has no permissions to run the 'bf.add' command")
    );
    println!(
        "{server}: module ACL categories checked on {} commands",
        commands.len()
    );
}
