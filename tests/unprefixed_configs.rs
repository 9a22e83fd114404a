//! RedisBloom 8's configuration names: on a server with unprefixed module configurations
//! (Redis 8.0 onwards) `bf-error-rate`, `bf-initial-size`, `bf-expansion-factor`,
//! `cf-bucket-size`, `cf-initial-size`, `cf-max-iterations`, `cf-expansion-factor` and
//! `cf-max-expansions` answer CONFIG GET, CONFIG SET, CONFIG REWRITE and configuration-file
//! lines with RedisBloom 8's ranges and error replies, and are the same settings as their
//! `bf.<name>` aliases. Elsewhere (Redis 7.0, Valkey 8.0 and 8.1) the module loads as before and
//! only `bf.<name>` exists.
pub mod common;

use common::*;

/// RedisBloom 8's eight names with their defaults.
const DEFAULTS: [(&str, &str); 8] = [
    ("bf-error-rate", "0.01"),
    ("bf-initial-size", "100"),
    ("bf-expansion-factor", "2"),
    ("cf-bucket-size", "2"),
    ("cf-initial-size", "1024"),
    ("cf-max-iterations", "20"),
    ("cf-expansion-factor", "1"),
    ("cf-max-expansions", "32"),
];

fn get(c: &mut Client, name: &str) -> Reply {
    call!(c, "CONFIG", "GET", name)
}

fn pair(name: &str, value: &str) -> Reply {
    Array(vec![bulk(name), bulk(value)])
}

/// The server's reply to a value the module refused: `reason` is RedisBloom 8's text.
fn refused(name: &str, reason: &str) -> Reply {
    err(&format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"
    ))
}

/// A server with unprefixed configurations, or None (and says so) on the others.
fn redis8() -> Option<Server> {
    let s = Server::start();
    let info = server_info(&mut s.client());
    if has_unprefixed_configs(&info) {
        Some(s)
    } else {
        println!("skipped: {info} has no unprefixed module configurations");
        None
    }
}

/// Whether the suite runs on a server with unprefixed configurations (says so where not).
fn on_redis8() -> bool {
    redis8().is_some()
}

#[test]
fn redisbloom8_names_are_the_bf_settings() {
    let Some(s) = redis8() else { return };
    let mut c = s.client();
    for (name, value) in DEFAULTS {
        assert_eq!(get(&mut c, name), pair(name, value), "{name}");
        let alias = format!("bf.{name}");
        assert_eq!(get(&mut c, &alias), pair(&alias, value), "{alias}");
    }
    // Set one name, read the other; the commands follow.
    assert_eq!(call!(c, "CONFIG", "SET", "bf-initial-size", "500"), ok());
    assert_eq!(
        get(&mut c, "bf.bf-initial-size"),
        pair("bf.bf-initial-size", "500")
    );
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-error-rate", "1e-3"), ok());
    assert_eq!(get(&mut c, "bf-error-rate"), pair("bf-error-rate", "1e-3"));
    assert_eq!(call!(c, "BF.ADD", "bf", "x"), Int(1));
    assert_eq!(
        call!(c, "BF.DEBUG", "bf").array()[1],
        bulk("bytes:992 bits:7936 hashes:11 hashwidth:64 capacity:500 size:1 ratio:0.0005")
    );
    for (name, value) in [
        ("cf-initial-size", "64"),
        ("bf.cf-bucket-size", "4"),
        ("cf-max-iterations", "7"),
        ("bf.cf-expansion-factor", "3"),
        ("bf-expansion-factor", "0"),
    ] {
        assert_eq!(call!(c, "CONFIG", "SET", name, value), ok(), "{name}");
    }
    assert_eq!(call!(c, "CF.ADD", "cf", "x"), Int(1));
    assert_eq!(
        call!(c, "CF.DEBUG", "cf"),
        bulk("bktsize:4 buckets:16 items:1 deletes:0 filters:1 max_iterations:7 expansion:4")
    );
    assert_eq!(call!(c, "BF.ADD", "fixed", "x"), Int(1));
    assert_eq!(call!(c, "BF.INFO", "fixed", "expansion"), Array(vec![Nil]));
    assert_eq!(
        get(&mut c, "bf.cf-max-iterations"),
        pair("bf.cf-max-iterations", "7")
    );
}

#[test]
fn ranges_and_error_replies_are_redisbloom8s() {
    let Some(s) = redis8() else { return };
    let mut c = s.client();
    let range =
        |name: &str, range: &str| format!("Value for `{name}` must be in the range {range}");
    let rate = range("bf-error-rate", "(0.000000, 1.000000)");
    let cases: Vec<(&str, &str, String)> = vec![
        ("bf-error-rate", "0", rate.clone()),
        ("bf-error-rate", "1", rate.clone()),
        ("bf-error-rate", "-0.5", rate),
        (
            "bf-error-rate",
            "abc",
            "Invalid value for `bf-error-rate`".into(),
        ),
        (
            "bf-initial-size",
            "0",
            range("bf-initial-size", "[1, 1073741824]"),
        ),
        (
            "bf-initial-size",
            "1073741825",
            range("bf-initial-size", "[1, 1073741824]"),
        ),
        (
            "bf-initial-size",
            "1.5",
            "Invalid value for `bf-initial-size`".into(),
        ),
        (
            "bf-expansion-factor",
            "-1",
            range("bf-expansion-factor", "[0, 32768]"),
        ),
        (
            "bf-expansion-factor",
            "32769",
            range("bf-expansion-factor", "[0, 32768]"),
        ),
        ("cf-bucket-size", "0", range("cf-bucket-size", "[1, 255]")),
        ("cf-bucket-size", "256", range("cf-bucket-size", "[1, 255]")),
        (
            "cf-initial-size",
            "3",
            range("cf-initial-size", "[4, 1073741824]"),
        ),
        (
            "cf-initial-size",
            "1073741825",
            range("cf-initial-size", "[4, 1073741824]"),
        ),
        (
            "cf-max-iterations",
            "0",
            range("cf-max-iterations", "[1, 65535]"),
        ),
        (
            "cf-max-iterations",
            "65536",
            range("cf-max-iterations", "[1, 65535]"),
        ),
        (
            "cf-expansion-factor",
            "32769",
            range("cf-expansion-factor", "[0, 32768]"),
        ),
        (
            "cf-max-expansions",
            "0",
            range("cf-max-expansions", "[1, 65536]"),
        ),
        (
            "cf-max-expansions",
            "65537",
            range("cf-max-expansions", "[1, 65536]"),
        ),
        (
            "cf-max-expansions",
            "x",
            "Invalid value for `cf-max-expansions`".into(),
        ),
        // The alias answers with RedisBloom 8's name in the reason.
        (
            "bf.cf-max-expansions",
            "0",
            range("cf-max-expansions", "[1, 65536]"),
        ),
    ];
    for (name, value, reason) in &cases {
        assert_eq!(
            call!(c, "CONFIG", "SET", *name, *value),
            refused(name, reason),
            "{name} {value}"
        );
    }
    // Nothing refused changed anything.
    for (name, value) in DEFAULTS {
        assert_eq!(get(&mut c, name), pair(name, value), "{name}");
    }
    // The ends of each range are taken.
    for (name, value) in [
        ("bf-initial-size", "1073741824"),
        ("bf-expansion-factor", "32768"),
        ("cf-max-iterations", "65535"),
        ("cf-expansion-factor", "0"),
        ("cf-max-expansions", "65536"),
        ("bf-error-rate", "0.25"),
    ] {
        assert_eq!(call!(c, "CONFIG", "SET", name, value), ok(), "{name}");
        assert_eq!(get(&mut c, name), pair(name, value), "{name}");
    }
    // An error rate above 0.25 is taken as 0.25.
    assert_eq!(call!(c, "CONFIG", "SET", "bf-error-rate", "0.5"), ok());
    assert_eq!(get(&mut c, "bf-error-rate"), pair("bf-error-rate", "0.25"));
    assert_eq!(call!(c, "CONFIG", "SET", "bf-initial-size", "100"), ok());
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    let debug = call!(c, "BF.DEBUG", "k").array()[1].text();
    assert!(
        debug.ends_with("capacity:100 size:1 ratio:0.125"),
        "{debug}"
    );
    // The Cuckoo initial size must stay at least twice the bucket size, both ways.
    assert_eq!(call!(c, "CONFIG", "SET", "cf-bucket-size", "8"), ok());
    assert_eq!(
        call!(c, "CONFIG", "SET", "cf-initial-size", "15"),
        refused(
            "cf-initial-size",
            &range("cf-initial-size", "[16, 1073741824]")
        )
    );
    assert_eq!(call!(c, "CONFIG", "SET", "cf-initial-size", "20"), ok());
    assert_eq!(
        call!(c, "CONFIG", "SET", "cf-bucket-size", "11"),
        refused("cf-bucket-size", &range("cf-bucket-size", "[1, 10]"))
    );
    assert_eq!(call!(c, "CONFIG", "SET", "cf-bucket-size", "10"), ok());
}

#[test]
fn configuration_file_lines_and_rewrite() {
    if !on_redis8() {
        return;
    }
    // RedisBloom 8's name and the alias both work as lines.
    let mut s = Server::with_conf_file(&["bf-initial-size 500", "bf.cf-bucket-size 4"]);
    let mut c = s.client();
    assert_eq!(
        get(&mut c, "bf-initial-size"),
        pair("bf-initial-size", "500")
    );
    assert_eq!(get(&mut c, "cf-bucket-size"), pair("cf-bucket-size", "4"));
    assert_eq!(call!(c, "CONFIG", "SET", "bf-error-rate", "0.002"), ok());
    assert_eq!(call!(c, "CONFIG", "SET", "bf.cf-max-expansions", "9"), ok());
    assert_eq!(call!(c, "CONFIG", "REWRITE"), ok());
    let conf = std::fs::read_to_string(s.conf_file.as_ref().unwrap()).unwrap();
    // The rewrite writes RedisBloom 8's names (string configurations, so quoted), in place of
    // the alias line too, and nothing under the alias.
    for line in [
        "bf-initial-size \"500\"",
        "cf-bucket-size \"4\"",
        "bf-error-rate \"0.002\"",
        "cf-max-expansions \"9\"",
    ] {
        assert_eq!(
            conf.lines().filter(|l| *l == line).count(),
            1,
            "{line}:\n{conf}"
        );
    }
    assert!(!conf.contains("bf.cf-bucket-size"), "{conf}");
    // And a restart from the rewritten file has the same settings.
    s.restart();
    let mut c = s.client();
    for (name, value) in [
        ("bf-initial-size", "500"),
        ("bf.cf-bucket-size", "4"),
        ("bf-error-rate", "0.002"),
        ("cf-max-expansions", "9"),
    ] {
        assert_eq!(get(&mut c, name), pair(name, value), "{name}");
    }
}

#[test]
fn a_refused_configuration_line_stops_the_load() {
    if !on_redis8() {
        return;
    }
    let log = failed_start_log(&["--cf-max-iterations", "0"]);
    assert!(
        log.contains("Value for `cf-max-iterations` must be in the range [1, 65535]"),
        "{log}"
    );
}

/// RedisBloom 2.8's load arguments keep their own ranges and become the defaults of both names
/// (RedisBloom 8 would refuse `INITIAL_SIZE 2000000000` and cap `ERROR_RATE 0.5` at 0.25).
#[test]
fn load_arguments_set_the_defaults() {
    let s = Server::build(&["ERROR_RATE", "0.5", "INITIAL_SIZE", "2000000000"], &[]);
    let mut c = s.client();
    if !has_unprefixed_configs(&server_info(&mut c)) {
        assert_eq!(
            get(&mut c, "bf.bf-error-rate"),
            pair("bf.bf-error-rate", "0.5")
        );
        return;
    }
    assert_eq!(get(&mut c, "bf-error-rate"), pair("bf-error-rate", "0.5"));
    assert_eq!(
        get(&mut c, "bf.bf-initial-size"),
        pair("bf.bf-initial-size", "2000000000")
    );
    // Setting them to another value takes RedisBloom 8's ranges again.
    assert_eq!(call!(c, "CONFIG", "SET", "bf-error-rate", "0.4"), ok());
    assert_eq!(get(&mut c, "bf-error-rate"), pair("bf-error-rate", "0.25"));
}

/// Where the server has no unprefixed configurations the module loads as before: the eight are
/// `bf.<name>` only, and RedisBloom 8's names are unknown to the server.
#[test]
fn elsewhere_only_the_bf_names_exist() {
    let s = Server::start();
    let mut c = s.client();
    let info = server_info(&mut c);
    if has_unprefixed_configs(&info) {
        println!("skipped: {info} has unprefixed module configurations");
        return;
    }
    for (name, value) in DEFAULTS {
        assert_eq!(get(&mut c, name), Array(vec![]), "{info}: {name}");
        let alias = format!("bf.{name}");
        assert_eq!(get(&mut c, &alias), pair(&alias, value), "{info}: {alias}");
        let reply = call!(c, "CONFIG", "SET", name, value);
        assert!(
            matches!(&reply, Error(e) if e.starts_with("ERR Unknown option") && e.contains(name)),
            "{info}: {name}: {reply:?}"
        );
    }
    // The flag is not even tried there, so the server logs no "Invalid flag(s)" warning.
    let log = s.log();
    assert!(
        !log.contains("Invalid flag") && !log.contains("refused unprefixed"),
        "{log}"
    );
}
