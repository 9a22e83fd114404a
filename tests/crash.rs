//! Crash durability: with `appendfsync always`, every acknowledged add survives SIGKILL at a
//! random moment and a restart from the AOF, with no truncated AOF to repair. Repeated after
//! an AOF rewrite without an RDB preamble.
pub mod common;

use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Adds items until the connection fails; returns the acknowledged ones.
fn writer(
    port: u16,
    cycle: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<(String, String)>>>,
) {
    let Ok(stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    drop(stream);
    let mut c = Client::connect(port);
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let (command, key) = if i % 2 == 0 {
            ("BF.ADD", "bf:seen")
        } else {
            ("CF.ADD", "cf:seen")
        };
        let item = format!("c{cycle}:i{i}");
        c.send(&[command, key, item.as_str()]);
        match c.try_read() {
            Some(Int(1)) | Some(Int(0)) => acked.lock().unwrap().push((key.to_string(), item)),
            _ => return,
        }
        i += 1;
    }
}

fn check_acknowledged(c: &mut Client, acked: &[(String, String)]) {
    for (family, key) in [("BF", "bf:seen"), ("CF", "cf:seen")] {
        let items: Vec<&String> = acked
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, i)| i)
            .collect();
        for batch in items.chunks(1000) {
            let mut args = vec![format!("{family}.MEXISTS"), key.to_string()];
            args.extend(batch.iter().map(|s| s.to_string()));
            let answers = c.call(&args).array();
            let lost = answers.iter().filter(|a| **a != Int(1)).count();
            assert_eq!(lost, 0, "{lost} acknowledged items of {key} lost");
        }
    }
}

fn crash_cycles(server: &mut Server, cycles: usize, seed: u64) -> usize {
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut state = seed;
    for cycle in 0..cycles {
        let stop = Arc::new(AtomicBool::new(false));
        let port = server.port;
        let thread = {
            let (stop, acked) = (stop.clone(), acked.clone());
            std::thread::spawn(move || writer(port, cycle, stop, acked))
        };
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::thread::sleep(Duration::from_millis(50 + (state >> 33) % 250));
        // On a loaded machine `appendfsync always` can make the random moment too early for
        // enough writes to be acknowledged: wait for them, then kill at once.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while acked.lock().unwrap().len() <= 101 * (cycle + 1)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        server.kill();
        stop.store(true, Ordering::Relaxed);
        thread.join().unwrap();
        server.restart();
        let log = server.log();
        assert!(!log.contains("Bad file format"), "{log}");
        assert!(
            !log.contains("short read") && !log.contains("truncated"),
            "the AOF needed repair:\n{log}"
        );
        let mut c = server.client();
        check_acknowledged(&mut c, &acked.lock().unwrap());
    }
    let total = acked.lock().unwrap().len();
    assert!(total > 100 * cycles, "only {total} items acknowledged");
    total
}

#[test]
fn acknowledged_items_survive_sigkill() {
    let config = ["--appendonly", "yes", "--appendfsync", "always"];
    let mut server = Server::build(&[], &config);
    let checked = crash_cycles(&mut server, 5, 0x5eed);
    println!("crash cycles: 5, acknowledged items checked: {checked}");
}

#[test]
fn acknowledged_items_survive_sigkill_after_a_plain_aof_rewrite() {
    let mut server = Server::build(&[], &aof_always("no"));
    let mut c = server.client();
    for i in 0..2000 {
        call!(c, "BF.ADD", "bf:seen", format!("before:{i}"));
        call!(c, "CF.ADD", "cf:seen", format!("before:{i}"));
    }
    rewrite_aof(&mut c);
    let checked = crash_cycles(&mut server, 2, 0xfeed);
    let mut c = server.client();
    let before: Vec<(String, String)> = (0..2000)
        .flat_map(|i| {
            [
                ("bf:seen".to_string(), format!("before:{i}")),
                ("cf:seen".to_string(), format!("before:{i}")),
            ]
        })
        .collect();
    check_acknowledged(&mut c, &before);
    println!(
        "crash cycles: 2 after a rewrite, acknowledged items checked: {}",
        checked + before.len()
    );
}
