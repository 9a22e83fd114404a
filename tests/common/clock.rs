//! Time on a `fault-injection` server: its clock read with TIME and moved with
//! `BF.__FAULT CLOCK`, so windowed filters see days pass without sleeping.

use super::*;

pub const HOUR: i64 = 3_600_000;
pub const DAY: i64 = 24 * HOUR;

/// The server's own clock (TIME), in Unix milliseconds.
pub fn server_ms(c: &mut Client) -> i64 {
    let time = c.call(&["TIME"]).array();
    let secs: i64 = time[0].text().parse().unwrap();
    let micros: i64 = time[1].text().parse().unwrap();
    secs * 1000 + micros / 1000
}

/// Sets the server's clock offset so that its windowed filters read `target` now.
pub fn travel_to(c: &mut Client, target: i64) {
    let offset = target - server_ms(c);
    let offset = offset.to_string();
    assert_eq!(c.call(&["BF.__FAULT", "CLOCK", offset.as_str()]), ok());
}

/// Noon (UTC) of a day a week from now: mid-slot, so a few real milliseconds never matter.
pub fn noon(c: &mut Client) -> i64 {
    let now = server_ms(c);
    now - now % DAY + 7 * DAY + 12 * HOUR
}

/// DEBUG DIGEST-VALUE of a key.
pub fn digest(c: &mut Client, key: &str) -> Reply {
    c.call(&["DEBUG", "DIGEST-VALUE", key])
}

/// The value of one `BF.INFO` field of a key.
pub fn info_field(c: &mut Client, key: &str, name: &str) -> Reply {
    info_fields(c.call(&["BF.INFO", key]))
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name}"))
}
