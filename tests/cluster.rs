//! Redis Cluster: three primaries on loopback, every BF./CF. command driven through a
//! cluster-aware client to keys spread over all slots (answers compared with a standalone
//! server running the same commands), then a slot holding filters moves to another node with
//! MIGRATE (DUMP/RESTORE) and every filter answers identically. And one logical filter split
//! over keys on different slots (docs/cluster-split.md): each item in exactly one key, chosen
//! by the CRC16 the cluster itself uses.
pub mod common;

use common::*;
use std::collections::HashMap;

/// The commands of the workload: every BF./CF. command on 40 users' keys.
fn workload() -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let words = |w: &[&str]| -> Vec<String> { w.iter().map(|s| s.to_string()).collect() };
    for user in 0..40 {
        let (bf, cf) = (format!("{{user{user}}}:seen"), format!("{{user{user}}}:cf"));
        let (bf, cf) = (bf.as_str(), cf.as_str());
        commands.push(words(&["BF.RESERVE", bf, "0.01", "20", "EXPANSION", "10"]));
        commands.push(words(&["CF.RESERVE", cf, "32", "BUCKETSIZE", "2"]));
        for i in 0..30 {
            let item = format!("item{i}");
            commands.push(words(&["BF.ADD", bf, &item]));
            commands.push(words(&["CF.ADD", cf, &item]));
        }
        commands.push(words(&["BF.MADD", bf, "a", "b", "item3"]));
        commands.push(words(&["BF.INSERT", bf, "ITEMS", "c", "d"]));
        commands.push(words(&["BF.EXISTS", bf, "item7"]));
        commands.push(words(&["BF.MEXISTS", bf, "item7", "nope"]));
        commands.push(words(&["BF.INFO", bf]));
        commands.push(words(&["BF.CARD", bf]));
        commands.push(words(&["BF.DEBUG", bf]));
        commands.push(words(&["BF.SCANDUMP", bf, "0"]));
        commands.push(words(&["CF.ADDNX", cf, "item1"]));
        commands.push(words(&["CF.INSERT", cf, "ITEMS", "x", "y"]));
        commands.push(words(&["CF.INSERTNX", cf, "ITEMS", "x", "z"]));
        commands.push(words(&["CF.EXISTS", cf, "item2"]));
        commands.push(words(&["CF.MEXISTS", cf, "item2", "nope"]));
        commands.push(words(&["CF.COUNT", cf, "x"]));
        commands.push(words(&["CF.DEL", cf, "item4"]));
        commands.push(words(&["CF.COMPACT", cf]));
        commands.push(words(&["CF.INFO", cf]));
        commands.push(words(&["CF.DEBUG", cf]));
        commands.push(words(&["CF.SCANDUMP", cf, "0"]));
        commands.push(words(&["BF.ADD", &format!("{{user{user}}}:auto"), "x"]));
        commands.push(words(&["CF.ADD", &format!("{{user{user}}}:cfauto"), "x"]));
    }
    commands
}

/// DUMP payload and SCANDUMP bytes of every key of the workload (both routed by key).
fn state(call: &mut dyn FnMut(&[String]) -> Reply) -> Vec<Reply> {
    let mut out = Vec::new();
    for user in 0..40 {
        for (family, key) in [
            ("BF", format!("{{user{user}}}:seen")),
            ("CF", format!("{{user{user}}}:cf")),
            ("BF", format!("{{user{user}}}:auto")),
        ] {
            out.push(call(&["DUMP".into(), key.clone()]));
            let mut iter = 0i64;
            loop {
                let reply = call(&[format!("{family}.SCANDUMP"), key.clone(), iter.to_string()]);
                out.push(reply.clone());
                iter = reply.array()[0].int();
                if iter == 0 {
                    break;
                }
            }
        }
    }
    out
}

/// Three primaries on loopback holding all 16384 slots.
fn start_three() -> Vec<Server> {
    start_cluster(3, 0, &[])
}

#[test]
fn filters_in_a_three_node_cluster() {
    let nodes = start_three();

    let standalone = Server::start();
    let mut single = standalone.client();
    let mut cluster = ClusterClient::new(nodes[0].port);
    for command in workload() {
        assert_eq!(cluster.call(&command), single.call(&command), "{command:?}");
    }
    // Keys landed on every node.
    for node in &nodes {
        assert!(call!(node.client(), "DBSIZE").int() > 10);
    }
    let before = state(&mut |args| single.call(args));
    assert_eq!(state(&mut |args| cluster.call(args)), before);

    // Move the slot of user7's filters to another node with MIGRATE.
    let slot = call!(nodes[0].client(), "CLUSTER", "KEYSLOT", "{user7}:seen").int();
    let owner_port = slot_owner(&mut nodes[0].client(), slot);
    let source = nodes.iter().find(|n| n.port == owner_port).unwrap();
    let target = nodes.iter().find(|n| n.port != owner_port).unwrap();
    let (mut s, mut t) = (source.client(), target.client());
    let (source_id, target_id) = (node_id(&mut s), node_id(&mut t));
    let slot = slot.to_string();
    assert_eq!(
        call!(
            t,
            "CLUSTER",
            "SETSLOT",
            slot.as_str(),
            "IMPORTING",
            source_id.as_str()
        ),
        ok()
    );
    assert_eq!(
        call!(
            s,
            "CLUSTER",
            "SETSLOT",
            slot.as_str(),
            "MIGRATING",
            target_id.as_str()
        ),
        ok()
    );
    let keys: Vec<String> = call!(s, "CLUSTER", "GETKEYSINSLOT", slot.as_str(), "100")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    assert_eq!(keys.len(), 4);
    let mut migrate = vec![
        "MIGRATE".to_string(),
        "127.0.0.1".into(),
        target.port.to_string(),
        "".into(),
        "0".into(),
        "5000".into(),
        "KEYS".into(),
    ];
    migrate.extend(keys.iter().cloned());
    assert_eq!(s.call(&migrate), ok());
    for node in &nodes {
        assert_eq!(
            call!(
                node.client(),
                "CLUSTER",
                "SETSLOT",
                slot.as_str(),
                "NODE",
                target_id.as_str()
            ),
            ok()
        );
    }
    assert_eq!(
        call!(t, "CLUSTER", "COUNTKEYSINSLOT", slot.as_str()),
        Int(4)
    );
    assert_eq!(
        call!(s, "CLUSTER", "COUNTKEYSINSLOT", slot.as_str()),
        Int(0)
    );
    let mut fresh = ClusterClient::new(source.port);
    assert_eq!(state(&mut |args| fresh.call(args)), before);
    assert_eq!(fresh.call(&["BF.EXISTS", "{user7}:seen", "item29"]), Int(1));
    assert_eq!(fresh.call(&["CF.COUNT", "{user7}:cf", "item29"]), Int(1));
}

/// CRC16/XMODEM (polynomial 0x1021, initial value 0): the function Redis Cluster hashes key
/// names with (`CLUSTER KEYSLOT` is it modulo 16384, on a key's hash tag if it has one).
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

const SLOTS: usize = 16384;

/// The part (of `parts`) an item belongs to: the share of the slot range its slot is in.
fn part_of(item: &[u8], parts: usize) -> usize {
    usize::from(crc16(item)) % SLOTS * parts / SLOTS
}

/// The key of part `part` of the logical filter `name`: its hash tag is the first decimal
/// number whose slot lies in the part's share of the slot range, so the keys land on distinct
/// slots spread over the range (and the nodes holding it).
fn part_key(name: &str, part: usize, parts: usize) -> String {
    let tag = (0u64..)
        .map(|n| n.to_string())
        .find(|tag| part_of(tag.as_bytes(), parts) == part)
        .unwrap();
    format!("{name}:{{{tag}}}")
}

/// `command key item...` for every item, with the items grouped by their part's key in
/// batches of a thousand, pipelined to the key's node; how many replies are 1.
fn split_command(
    nodes: &mut HashMap<u16, Client>,
    parts: &[(String, u16)],
    command: &str,
    items: &[String],
) -> usize {
    let mut grouped = vec![Vec::new(); parts.len()];
    for item in items {
        grouped[part_of(item.as_bytes(), parts.len())].push(item.as_str());
    }
    let mut ones = 0;
    for ((key, port), group) in parts.iter().zip(&grouped) {
        let client = nodes.get_mut(port).unwrap();
        let batches: Vec<&[&str]> = group.chunks(1000).collect();
        for window in batches.chunks(32) {
            for batch in window {
                let mut args = vec![command, key.as_str()];
                args.extend_from_slice(batch);
                client.send(&args);
            }
            for _ in window {
                ones += client
                    .read()
                    .array()
                    .iter()
                    .filter(|r| **r == Int(1))
                    .count();
            }
        }
    }
    ones
}

#[test]
fn one_filter_split_over_the_cluster() {
    const PARTS: usize = 16;
    const ITEMS: usize = 1_000_000;
    const ERROR: f64 = 0.01;
    let nodes = start_three();
    let mut c = nodes[0].client();
    // The test's CRC16 is the cluster's.
    for key in ["", "a", "item:1", "123456789", "seen:part"] {
        let slot = i64::from(crc16(key.as_bytes())) % SLOTS as i64;
        assert_eq!(call!(c, "CLUSTER", "KEYSLOT", key), Int(slot), "{key}");
    }
    let parts: Vec<(String, u16)> = (0..PARTS)
        .map(|part| {
            let key = part_key("seen", part, PARTS);
            let slot = call!(c, "CLUSTER", "KEYSLOT", key.as_str()).int();
            assert_eq!(slot as usize * PARTS / SLOTS, part, "{key}");
            let port = slot_owner(&mut c, slot);
            (key, port)
        })
        .collect();
    let ports: std::collections::BTreeSet<u16> = parts.iter().map(|(_, port)| *port).collect();
    assert_eq!(
        ports.len(),
        3,
        "the parts are spread over every node: {parts:?}"
    );
    let mut clients: HashMap<u16, Client> = ports
        .iter()
        .map(|&port| (port, Client::connect(port)))
        .collect();

    // Each part expects a binomial share of the items: reserved for its mean plus four
    // standard deviations, none outgrows its first link, so each keeps the requested rate.
    let share = (ITEMS / PARTS) as f64;
    let capacity = (share + 4.0 * share.sqrt()).ceil().to_string();
    for (key, port) in &parts {
        let reply = clients.get_mut(port).unwrap().call(&[
            "BF.RESERVE",
            key.as_str(),
            "0.01",
            capacity.as_str(),
        ]);
        assert_eq!(reply, ok(), "{key}");
    }
    let added: Vec<String> = (0..ITEMS).map(|i| format!("item:{i}")).collect();
    let absent: Vec<String> = (0..ITEMS).map(|i| format!("absent:{i}")).collect();
    let new = split_command(&mut clients, &parts, "BF.MADD", &added);
    let mut inserted = 0;
    for (key, port) in &parts {
        let info = call!(clients.get_mut(port).unwrap(), "BF.INFO", key.as_str()).array();
        assert_eq!(info[5], Int(1), "{key} grew a second link");
        assert!(info[7].int() as f64 > share * 0.9, "{key}: {info:?}");
        inserted += info[7].int() as usize;
    }
    assert_eq!(inserted, new);

    // No false negatives; the union's false-positive rate is each part's (an absent item is
    // looked up in one part only): within the requested rate plus three standard deviations
    // of the count over a million probes.
    assert_eq!(
        split_command(&mut clients, &parts, "BF.MEXISTS", &added),
        ITEMS
    );
    let false_positives = split_command(&mut clients, &parts, "BF.MEXISTS", &absent);
    let expected = ITEMS as f64 * ERROR;
    let bound = expected + 3.0 * (expected * (1.0 - ERROR)).sqrt();
    eprintln!("split filter: {false_positives} false positives in {ITEMS} probes");
    assert!(
        (false_positives as f64) <= bound,
        "{false_positives} false positives in {ITEMS} probes (bound {bound:.0})"
    );
}
