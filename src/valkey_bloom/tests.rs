use super::*;
use crate::rdb::{LoadError, MemoryRdb};
use serde_json::Value;

fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valkey-bloom")
        .join(name)
}

fn answers() -> Value {
    let text = std::fs::read_to_string(fixture_path("answers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The `BF.LOAD key blob` commands of the fixture AOF, as (key, blob).
fn fixture_loads() -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(fixture_path("appendonlydir/appendonly.aof.2.base.aof")).unwrap();
    let mut rest = &bytes[..];
    let line = |rest: &mut &[u8]| {
        let end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
        let text = String::from_utf8(rest[1..end].to_vec()).unwrap();
        *rest = &rest[end + 2..];
        text.parse::<usize>().unwrap()
    };
    let mut loads = Vec::new();
    while !rest.is_empty() {
        let argc = line(&mut rest);
        let mut argv = Vec::new();
        for _ in 0..argc {
            let len = line(&mut rest);
            argv.push(rest[..len].to_vec());
            rest = &rest[len + 2..];
        }
        if argv[0] == b"BF.LOAD" {
            loads.push((String::from_utf8(argv[1].clone()).unwrap(), argv[2].clone()));
        }
    }
    loads
}

fn item(spec: &Value, n: u64) -> Vec<u8> {
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    if spec["items"]["gen"] == "binary" {
        if n == 0 {
            return Vec::new();
        }
        let mut out = format!("{prefix}{n}").into_bytes();
        out.extend_from_slice(&[0, 0xff, (n % 256) as u8]);
        return out;
    }
    format!("{prefix}{n}").into_bytes()
}

fn probes(spec: &Value) -> Vec<Vec<u8>> {
    let p = &spec["probes"];
    let step = p["pos_step"].as_u64().unwrap();
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    let mut out: Vec<Vec<u8>> = (0..p["pos_count"].as_u64().unwrap())
        .map(|i| item(spec, i * step))
        .collect();
    out.extend(
        (0..p["neg_count"].as_u64().unwrap()).map(|j| format!("{prefix}neg:{j}").into_bytes()),
    );
    out
}

fn bits(bloom: &ValkeyBloom, items: &[Vec<u8>]) -> String {
    items
        .iter()
        .map(|i| if bloom.contains(i) { '1' } else { '0' })
        .collect()
}

fn spec_of<'a>(answers: &'a Value, key: &str) -> &'a Value {
    answers["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == key)
        .unwrap()
}

/// The numbers of `BF.INFO` a recorded `info` holds.
fn assert_info(bloom: &ValkeyBloom, info: &Value, key: &str) {
    assert_eq!(
        bloom.capacity(),
        info["Capacity"].as_u64().unwrap(),
        "{key}"
    );
    assert_eq!(
        bloom.filters().len() as u64,
        info["Number of filters"].as_u64().unwrap(),
        "{key}"
    );
    assert_eq!(
        bloom.card(),
        info["Number of items inserted"].as_u64().unwrap(),
        "{key}"
    );
    let rate: f64 = info["Error rate"].as_str().unwrap().parse().unwrap();
    assert_eq!(bloom.fp_rate(), rate, "{key}");
    match info["Expansion rate"].as_u64() {
        Some(x) => {
            assert_eq!(u64::from(bloom.expansion()), x, "{key}");
            let max = bloom.max_scaled_capacity(DEFAULT_OBJECT_LIMIT).unwrap();
            assert_eq!(max, info["Max scaled capacity"].as_u64().unwrap(), "{key}");
        }
        None => assert_eq!(bloom.expansion(), 0, "{key}"),
    }
}

#[test]
fn siphash13_matches_reference_values() {
    // SipHash-1-3 under the all-zero key, as CPython 3.11 computes it for bytes (its hash
    // with PYTHONHASHSEED=0).
    let cases: [(&[u8], u64); 4] = [
        (b"a", 0x4074_48d2_b89b_1813),
        (b"abcdefg", 0x6db1_2aae_9070_f506),
        (b"abcdefgh", 0x3f7b_849c_0b8e_35ea),
        (
            b"The quick brown fox jumps over the lazy dog",
            0x8df6_76d3_d00c_451e,
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(sip13(0, 0, &[input]), expected, "{input:?}");
        // The same stream cut anywhere hashes the same.
        for cut in 0..input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(sip13(0, 0, &[a, b]), expected, "{input:?} cut at {cut}");
        }
    }
}

#[test]
fn the_fixed_seed_gives_valkey_blooms_sip_keys() {
    let filter = SipFilter::new(FIXED_SEED, 100, 120);
    let seed = filter.seed();
    let word = |at: usize| u64::from_le_bytes(seed[at..at + 8].try_into().unwrap());
    assert_eq!(word(0), 15713473521876537177);
    assert_eq!(word(8), 15671187751654921383);
    assert_eq!(word(16), 9766223185946773789);
    assert_eq!(word(24), 9453907914610147120);
}

#[test]
fn the_test_vector_capacity_100_rate_1_percent_fixed_seed() {
    let params = Params {
        capacity: 100,
        fp_rate: 0.01,
        tightening: 0.5,
        expansion: 2,
        seed: FIXED_SEED,
        seed_random: false,
    };
    let mut bloom = ValkeyBloom::new(&params, u64::MAX).unwrap();
    let filter = &bloom.filters()[0];
    assert_eq!(filter.bits().len(), 120);
    assert_eq!(filter.hashes(), 7);
    assert_eq!(bloom.add(b"foo", &u64::MAX), Ok(true));
    let set: Vec<usize> = (0..960)
        .filter(|b| bloom.filters()[0].bits()[b / 8] & (1 << (b % 8)) != 0)
        .collect();
    assert_eq!(set, [23, 90, 189, 355, 651, 687, 817]);
    assert_eq!(bloom.add(b"foo", &u64::MAX), Ok(false));
    assert_eq!(bloom.card(), 1);
    assert_eq!(bloom.size(), 384);
}

#[test]
fn fixture_blobs_answer_as_valkey_bloom_did() {
    let answers = answers();
    let loads = fixture_loads();
    assert_eq!(loads.len(), answers["keys"].as_array().unwrap().len());
    for (key, blob) in loads {
        let spec = spec_of(&answers, &key);
        let mut bloom = decode_blob(&blob, u64::MAX).unwrap_or_else(|e| panic!("{key}: {e:?}"));
        let probes = probes(spec);
        assert_eq!(
            bits(&bloom, &probes),
            spec["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(bloom.card(), spec["card"].as_u64().unwrap(), "{key}");
        assert_info(&bloom, &spec["info"], &key);
        assert_eq!(encode_blob(&bloom), blob, "{key}: written back unchanged");
        // The 1,000 further adds continue its scaling exactly.
        let prefix = spec["items"]["prefix"].as_str().unwrap();
        let extra: Vec<Vec<u8>> = (0..1000)
            .map(|j| format!("{prefix}x:{j}").into_bytes())
            .collect();
        let codes: String = extra
            .iter()
            .map(|i| match bloom.add(i, &u64::MAX) {
                Ok(true) => '1',
                Ok(false) => '0',
                Err(_) => 'E',
            })
            .collect();
        let post = &spec["post"];
        assert_eq!(codes, spec["extra"]["add_codes"].as_str().unwrap(), "{key}");
        assert_eq!(
            bits(&bloom, &probes),
            post["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            bits(&bloom, &extra),
            post["extra_exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(bloom.card(), post["card"].as_u64().unwrap(), "{key}");
        assert_info(&bloom, &post["info"], &key);
    }
}

#[test]
fn sizes_follow_valkey_blooms_accounting_when_built_by_adds() {
    let answers = answers();
    for spec in answers["keys"].as_array().unwrap() {
        let key = spec["key"].as_str().unwrap();
        let (blob_key, blob) = fixture_loads().into_iter().find(|(k, _)| k == key).unwrap();
        assert_eq!(blob_key, key);
        let loaded = decode_blob(&blob, u64::MAX).unwrap();
        // Rebuild by adds from the loaded object's first filter: the same seed and shape.
        let params = Params {
            capacity: loaded.filters()[0].capacity,
            fp_rate: loaded.fp_rate(),
            tightening: loaded.tightening(),
            expansion: loaded.expansion(),
            seed: loaded.seed(),
            seed_random: loaded.seed_random(),
        };
        let mut built = ValkeyBloom::new(&params, u64::MAX).unwrap();
        let count = spec["items"]["count"].as_u64().unwrap();
        for n in 0..count {
            let _ = built.add(&item(spec, n), &u64::MAX);
        }
        assert_eq!(built.filters(), loaded.filters(), "{key}");
        assert_eq!(
            built.size(),
            spec["info"]["Size"].as_u64().unwrap(),
            "{key}"
        );
    }
}

#[test]
fn the_rdb_value_round_trips() {
    for (key, blob) in fixture_loads() {
        let bloom = decode_blob(&blob, u64::MAX).unwrap();
        let mut rdb = MemoryRdb::new();
        bloom.save(&mut rdb);
        let back = ValkeyBloom::load(&mut rdb, ENCODING_VERSION, u64::MAX).unwrap();
        assert_eq!(back.filters(), bloom.filters(), "{key}");
        assert_eq!(encode_blob(&back), blob, "{key}");
        assert!(rdb.fields.is_empty());
    }
}

fn small() -> ValkeyBloom {
    let params = Params {
        capacity: 10,
        fp_rate: 0.01,
        tightening: 0.5,
        expansion: 2,
        seed: FIXED_SEED,
        seed_random: false,
    };
    let mut bloom = ValkeyBloom::new(&params, u64::MAX).unwrap();
    for i in 0..25 {
        bloom.add(format!("i{i}").as_bytes(), &u64::MAX).unwrap();
    }
    bloom
}

#[test]
fn the_validator_refuses_broken_blobs() {
    let good = encode_blob(&small());
    assert!(decode_blob(&good, u64::MAX).is_ok());
    let refused = |bytes: &[u8]| decode_blob(bytes, u64::MAX).unwrap_err();
    assert_eq!(refused(&[]), LoadBlobError::Malformed("blob ends early"));
    let mut v = good.clone();
    v[0] = 2;
    assert_eq!(refused(&v), LoadBlobError::UnsupportedVersion);
    let mut v = good.clone();
    v[1] = 11;
    assert_eq!(refused(&v), LoadBlobError::BadExpansion);
    let mut v = good.clone();
    v[5..13].copy_from_slice(&1.0f64.to_le_bytes());
    assert_eq!(refused(&v), LoadBlobError::RateRange);
    let mut v = good.clone();
    v[13..21].copy_from_slice(&0.0f64.to_le_bytes());
    assert_eq!(refused(&v), LoadBlobError::RateRange);
    let mut v = good.clone();
    v[21] = 2;
    assert_eq!(refused(&v), LoadBlobError::Malformed("bad seed mode"));
    let mut v = good.clone();
    v[22..30].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(refused(&v), LoadBlobError::Malformed("no filters"));
    let mut v = good.clone();
    v[22..30].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(refused(&v), LoadBlobError::TooManyFilters);
    // The first filter starts at 30 (its length), its bytes at 38.
    let mut v = good.clone();
    v[38] = 2;
    assert_eq!(refused(&v), LoadBlobError::Malformed("bad filter version"));
    let mut v = good.clone();
    v[39] ^= 1;
    assert_eq!(
        refused(&v),
        LoadBlobError::Malformed("filter length does not match its bits")
    );
    let mut v = good.clone();
    v[47..51].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(
        refused(&v),
        LoadBlobError::Malformed("bad number of hashes")
    );
    let mut v = good.clone();
    v[51] ^= 1;
    assert_eq!(
        refused(&v),
        LoadBlobError::Malformed("fixed seed mode with another seed")
    );
    let mut v = good.clone();
    v.push(0);
    assert_eq!(
        refused(&v),
        LoadBlobError::Malformed("bytes after the object")
    );
    for cut in 0..good.len() {
        assert!(decode_blob(&good[..cut], u64::MAX).is_err(), "cut at {cut}");
    }
    let size = decode_blob(&good, u64::MAX).unwrap().size();
    assert_eq!(
        decode_blob(&good, size - 1).unwrap_err(),
        LoadBlobError::TooLarge
    );
    assert!(decode_blob(&good, size).is_ok());
}

#[test]
fn the_validator_refuses_broken_rdb_values() {
    let bloom = small();
    let mut rdb = MemoryRdb::new();
    bloom.save(&mut rdb);
    let fields: Vec<_> = rdb.fields.iter().cloned().collect();
    let load = |fields: &[crate::rdb::Field]| {
        let mut r = MemoryRdb {
            fields: fields.iter().cloned().collect(),
        };
        ValkeyBloom::load(&mut r, ENCODING_VERSION, u64::MAX)
    };
    assert!(load(&fields).is_ok());
    for cut in 0..fields.len() {
        assert_eq!(
            load(&fields[..cut]).unwrap_err(),
            LoadError::Io,
            "cut at {cut}"
        );
    }
    let mut bad = fields.clone();
    bad[0] = crate::rdb::Field::Unsigned(0);
    assert_eq!(load(&bad).unwrap_err(), LoadError::Invalid("no filters"));
    let mut bad = fields.clone();
    bad[0] = crate::rdb::Field::Unsigned(u64::MAX);
    assert_eq!(
        load(&bad).unwrap_err(),
        LoadError::Invalid("too many filters")
    );
    // The last filter's item count above its capacity.
    let mut bad = fields.clone();
    let last = bad.len() - 1;
    bad[last] = crate::rdb::Field::Unsigned(u64::MAX);
    assert_eq!(
        load(&bad).unwrap_err(),
        LoadError::Invalid("bad item count")
    );
    let mut r = MemoryRdb::new();
    bloom.save(&mut r);
    assert_eq!(
        ValkeyBloom::load(&mut r, 2, u64::MAX).unwrap_err(),
        LoadError::UnknownVersion(2)
    );
    let mut r = MemoryRdb::new();
    bloom.save(&mut r);
    assert_eq!(
        ValkeyBloom::load(&mut r, 1, 100).unwrap_err(),
        LoadError::TooLarge
    );
}

#[test]
fn growth_stops_as_valkey_bloom_stops() {
    let mut params = Params {
        capacity: 2,
        fp_rate: 0.01,
        tightening: 0.5,
        expansion: 0,
        seed: FIXED_SEED,
        seed_random: false,
    };
    let mut bloom = ValkeyBloom::new(&params, u64::MAX).unwrap();
    bloom.add(b"a", &u64::MAX).unwrap();
    bloom.add(b"b", &u64::MAX).unwrap();
    assert_eq!(bloom.add(b"c", &u64::MAX), Err(GrowError::Full));
    params.expansion = 2;
    let mut bloom = ValkeyBloom::new(&params, u64::MAX).unwrap();
    bloom.add(b"a", &u64::MAX).unwrap();
    bloom.add(b"b", &u64::MAX).unwrap();
    let limit = bloom.size();
    assert_eq!(bloom.add(b"c", &limit), Err(GrowError::OverLimit));
    assert_eq!(bloom.add(b"c", &u64::MAX), Ok(true));
    assert_eq!(bloom.filters().len(), 2);
    assert_eq!(
        ValkeyBloom::new(
            &Params {
                fp_rate: 1.0,
                ..params
            },
            u64::MAX
        ),
        Err(MakeError::Invalid)
    );
    assert_eq!(ValkeyBloom::new(&params, 100), Err(MakeError::TooLarge));
}

#[test]
fn scaled_capacity_matches_valkey_blooms_examples() {
    // valkey-bloom's own cases: (capacity, rate, target, expansion, reached).
    let cases = [
        (1000, 0.01, 10000, 2, 15000),
        (10000, 0.001, 100000, 4, 210000),
        (50000, 0.0001, 500000, 3, 650000),
        (100000, 0.00001, 1000000, 2, 1500000),
        (100, 0.00001, 1000, 1, 1000),
    ];
    for (capacity, rate, target, expansion, reached) in cases {
        let got = ValkeyBloom::scaled_capacity(
            capacity,
            rate,
            0.5,
            expansion,
            DEFAULT_OBJECT_LIMIT,
            Some(target),
        );
        assert_eq!(got, Ok(reached));
    }
}

#[test]
fn a_scale_out_plan_counts_no_more_filters_than_an_object_holds() {
    // One item a filter, a rate that barely tightens: under 128 MiB the plan would walk about
    // 600,000 filters, where an object holds at most MAX_FILTERS.
    let plan =
        |target| ValkeyBloom::scaled_capacity(1, 0.999, 0.999_999, 1, DEFAULT_OBJECT_LIMIT, target);
    assert_eq!(plan(None), Ok(MAX_FILTERS as u64));
    assert_eq!(plan(Some(MAX_FILTERS as u64)), Ok(MAX_FILTERS as u64));
    assert_eq!(
        plan(Some(MAX_FILTERS as u64 + 1)),
        Err(ScaleError::TooManyFilters)
    );
    assert_eq!(plan(Some(i64::MAX as u64)), Err(ScaleError::TooManyFilters));
}

/// A figure of `million/<name>.txt`.
fn million_figure(name: &str, figure: &str) -> u64 {
    let text = std::fs::read_to_string(fixture_path(&format!("million/{name}.txt"))).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(figure)?.trim().parse().ok())
        .unwrap()
}

/// The million fixtures' probes: 50,000 added items, then 50,000 never added.
fn million_probes() -> Vec<Vec<u8>> {
    let added = (0..50_000).map(|i| format!("million:{}", 20 * i));
    let absent = (0..50_000).map(|j| format!("million:neg:{j}"));
    added.chain(absent).map(String::into_bytes).collect()
}

#[test]
fn a_million_adds_build_the_bloomfilter_crates_bytes() {
    // (name, capacity, rate, expansion), as the fixtures' README says they were made.
    let objects = [
        ("nonscaling", 1_000_000, 0.05, 0),
        ("scaling", 250_000, 0.05, 4),
    ];
    let probes = million_probes();
    for (name, capacity, fp_rate, expansion) in objects {
        let blob = std::fs::read(fixture_path(&format!("million/{name}.load"))).unwrap();
        let loaded = decode_blob(&blob, u64::MAX).unwrap();
        let recorded = std::fs::read(fixture_path(&format!("million/{name}.probes"))).unwrap();
        for (at, probe) in probes.iter().enumerate() {
            let bit = recorded[at / 8] & (1 << (at % 8)) != 0;
            assert_eq!(loaded.contains(probe), bit, "{name} probe {at}");
        }
        assert_eq!(loaded.card(), million_figure(name, "card"), "{name}");
        assert_eq!(
            loaded.capacity(),
            million_figure(name, "capacity"),
            "{name}"
        );
        let filters = loaded.filters().len() as u64;
        assert_eq!(filters, million_figure(name, "filters"), "{name}");
        assert_eq!(encode_blob(&loaded), blob, "{name}");
        // The same object made by a million adds, byte for byte.
        let params = Params {
            capacity,
            fp_rate,
            tightening: 0.5,
            expansion,
            seed: FIXED_SEED,
            seed_random: false,
        };
        let mut built = ValkeyBloom::new(&params, u64::MAX).unwrap();
        for n in 0..1_000_000 {
            built
                .add(format!("million:{n}").as_bytes(), &u64::MAX)
                .unwrap();
        }
        assert!(encode_blob(&built) == blob, "{name}: built by adds");
    }
}
