//! Which server loaded the module, Redis or Valkey and at which version, and what that allows:
//! the features bloomrs declares or registers only where the server has them. Read once at load
//! (`ffi::server::host`) from `INFO server`: Valkey names itself in `server_name` and gives its
//! own version in `valkey_version`, while its `redis_version` stays 7.2.4 for clients' sake;
//! Redis has no `server_name` and its version is the one the module API reports.

/// The server product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    Redis,
    Valkey,
}

/// The server the module is loaded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    pub product: Product,
    /// Major, minor, patch.
    pub version: (u32, u32, u32),
}

impl Host {
    /// From `INFO server`'s `server_name` and `valkey_version` fields (absent on Redis) and the
    /// module API's server version (`0x00MMmmpp`; Valkey 9 fills it with its own version), used
    /// for Valkey only where `valkey_version` cannot be read.
    pub fn from_info(server_name: Option<&[u8]>, valkey_version: Option<&[u8]>, api: i32) -> Host {
        let product = match server_name {
            None | Some(b"redis") => Product::Redis,
            Some(_) => Product::Valkey,
        };
        let from_api = {
            let api = u32::try_from(api).unwrap_or(0);
            ((api >> 16) & 0xff, (api >> 8) & 0xff, api & 0xff)
        };
        let version = match product {
            Product::Valkey => valkey_version.and_then(parse_version).unwrap_or(from_api),
            Product::Redis => from_api,
        };
        Host { product, version }
    }

    /// Unprefixed module configurations (`bf-error-rate` beside `bf.bf-error-rate`): Redis 8.0
    /// added them; Valkey refuses the flag (with a warning in its log).
    pub fn may_have_unprefixed_configs(&self) -> bool {
        self.product == Product::Redis && self.version >= (8, 0, 0)
    }

    /// Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`), which runs only when every
    /// loaded module declares it handles it. The declaration is an option bit that means
    /// something else, or nothing, on Redis, so it is set on Valkey 9 and later only.
    pub fn has_atomic_slot_migration(&self) -> bool {
        self.product == Product::Valkey && self.version >= (9, 0, 0)
    }
}

/// `9.1.2` (or `9.1`) as numbers.
fn parse_version(text: &[u8]) -> Option<(u32, u32, u32)> {
    let text = std::str::from_utf8(text).ok()?;
    let mut parts = text.trim().split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each supported server answers (checked on Redis 7.0.15 and 8.0.2, Valkey 8.0.1,
    /// 8.1.1 and 9.1.2): `server_name`, `valkey_version`, the API version; what it gets: the
    /// host, unprefixed configurations, atomic slot migration.
    #[test]
    fn each_server_gets_what_it_has() {
        type Info = (Option<&'static [u8]>, Option<&'static [u8]>, i32);
        let (redis, valkey) = (Product::Redis, Product::Valkey);
        let cases: [(Info, Host, bool, bool); 6] = [
            (
                (None, None, 0x07_00_0f),
                host(redis, (7, 0, 15)),
                false,
                false,
            ),
            (
                (None, None, 0x08_00_02),
                host(redis, (8, 0, 2)),
                true,
                false,
            ),
            // Valkey 8.0's API version is the Redis compatibility one.
            (
                (Some(b"valkey"), Some(b"8.0.1"), 0x07_02_04),
                host(valkey, (8, 0, 1)),
                false,
                false,
            ),
            (
                (Some(b"valkey"), Some(b"8.1.1"), 0x08_01_01),
                host(valkey, (8, 1, 1)),
                false,
                false,
            ),
            (
                (Some(b"valkey"), Some(b"9.1.2"), 0x09_01_02),
                host(valkey, (9, 1, 2)),
                false,
                true,
            ),
            // A Redis 9 (should one come) never gets Valkey's bit.
            (
                (Some(b"redis"), None, 0x09_00_00),
                host(redis, (9, 0, 0)),
                true,
                false,
            ),
        ];
        for ((name, valkey_version, api), expected, unprefixed, migration) in cases {
            let found = Host::from_info(name, valkey_version, api);
            assert_eq!(found, expected, "{name:?} {valkey_version:?}");
            assert_eq!(found.may_have_unprefixed_configs(), unprefixed, "{found:?}");
            assert_eq!(found.has_atomic_slot_migration(), migration, "{found:?}");
        }
    }

    fn host(product: Product, version: (u32, u32, u32)) -> Host {
        Host { product, version }
    }

    #[test]
    fn valkey_version_falls_back_to_the_api_version() {
        let host = Host::from_info(Some(b"valkey"), Some(b"nine"), 0x09_00_01);
        assert_eq!(host.version, (9, 0, 1));
        assert!(host.has_atomic_slot_migration());
        let host = Host::from_info(Some(b"valkey"), None, -1);
        assert_eq!(host.version, (0, 0, 0));
        assert!(!host.has_atomic_slot_migration());
        assert_eq!(parse_version(b"9.1"), Some((9, 1, 0)));
        assert_eq!(parse_version(b"9"), None);
        assert_eq!(parse_version(b"9.x.1"), None);
    }
}
