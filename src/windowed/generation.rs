//! What one generation of a window is: the operations [`Window`](super::Window) needs of it,
//! and the two kinds it is built of. A chain of RedisBloom links (`bloomrsWN`, the filters
//! windowed since the kind began) or a compact filter grown by segments (`bloomrsWC`, its
//! memory following the items each generation holds). The window owns the clock, the ring,
//! the error split and the encodings' framing; a generation owns its hashing, its growth and
//! its own encoding, which it brings unchanged from its kind.

use std::borrow::Cow;

use super::WindowParams;
use crate::bloom::{
    AddError, Chain, ChunkError, CreateError, HeaderError, ItemHash, ERROR_TIGHTENING, OPT_ALL,
    OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING, OPT_SPREAD,
};
use crate::budget::Budget;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// One generation of a window.
pub trait Generation: Clone + PartialEq + std::fmt::Debug + Sized {
    /// The first eight bytes of the window's SCANDUMP header.
    const MAGIC: &'static [u8; 8];
    /// The window's RDB encoding version.
    const ENCODING_VERSION: i32;
    /// Whether the window keeps a placement secret (chosen on the primary) that every
    /// generation is built with; a window of another kind holds zero and stores none.
    const KEYED: bool;
    /// Bytes accounted for each generation besides its own.
    const GENERATION_OVERHEAD: u64;
    /// Whether windows of this kind may probe by spread hashing ([`WindowParams::spread`]),
    /// as every new one does.
    const SPREADS: bool = false;

    /// Bytes accounted for the window itself.
    fn window_overhead() -> u64;

    /// The hash a lookup computes once and asks every generation with.
    fn hash(item: &[u8]) -> ItemHash;

    /// Whether windows of these parameters can hold generations of this kind (beyond the
    /// window's own checks).
    fn check_params(params: &WindowParams) -> Result<(), &'static str>;

    /// A new empty generation of the window, within `room` bytes.
    fn build(params: &WindowParams, secret: u64, room: u64) -> Result<Self, CreateError>;
    /// The bytes a generation reports once it holds its share of the window's capacity
    /// (`BF.ESTIMATE`).
    fn size_for(params: &WindowParams) -> Result<u64, CreateError>;

    fn contains_hash(&self, hash: ItemHash) -> bool;
    fn add_hash(
        &mut self,
        hash: ItemHash,
        params: &WindowParams,
        budget: impl Budget,
    ) -> Result<bool, AddError>;

    /// Whether every chunk of a LOADCHUNK sequence has arrived (always, otherwise).
    fn is_loaded(&self) -> bool;
    /// Items added (BF.CARD's share).
    fn items(&self) -> u64;
    /// Items it takes before it grows again (BF.INFO Capacity's share).
    fn capacity(&self, params: &WindowParams) -> u64;
    /// Filters it is made of (BF.INFO Number of filters' share).
    fn filters(&self) -> u64;
    /// Bytes accounted for it (BF.INFO Size, MEMORY USAGE).
    fn bytes(&self) -> u64;

    /// The window's part of the validator: a generation loaded from outside must be shaped
    /// as the window builds them (its own loader checked it is a valid value of its kind).
    fn check_shape(&self, params: &WindowParams, secret: u64) -> Result<(), LoadError>;

    fn save(&self, params: &WindowParams, w: &mut impl RdbWrite);
    fn load(r: &mut impl RdbRead, params: &WindowParams, max_bytes: u64)
        -> Result<Self, LoadError>;

    /// Its own SCANDUMP header, and a generation awaiting chunks from one.
    fn encode_header(&self, params: &WindowParams) -> Vec<u8>;
    fn from_header(
        header: &[u8],
        params: &WindowParams,
        max_bytes: u64,
    ) -> Result<Self, HeaderError>;
    /// Iterator positions its chunks take (`1..=span`, as its own SCANDUMP numbers them).
    fn span(&self) -> u64;
    /// Iterator positions a chunk of these bytes takes; None if it cannot be one.
    fn positions(data: &[u8]) -> Option<u64>;
    /// Its own chunk at `iter >= 1` and the iterator after it: SCANDUMP's, or of at most
    /// `limit` bytes where its chunks can be cut that small and load alike.
    fn chunk_at(
        &self,
        params: &WindowParams,
        iter: i64,
        limit: u64,
    ) -> Option<(i64, Cow<'_, [u8]>)>;
    fn load_chunk(
        &mut self,
        params: &WindowParams,
        iter: i64,
        data: &[u8],
        max_bytes: u64,
    ) -> Result<(), ChunkError>;
}

impl WindowParams {
    /// The option bits every generation's chain carries.
    fn chain_options(&self) -> u32 {
        let options = if self.spread {
            OPT_NOROUND | OPT_FORCE64 | OPT_SPREAD
        } else {
            OPT_NOROUND | OPT_FORCE64
        };
        if self.scaling {
            options
        } else {
            options | OPT_NO_SCALING
        }
    }

    /// The error rate of a generation's first link, as `Chain::new` sets it.
    fn first_link_error(&self) -> f64 {
        if self.scaling {
            self.generation_error() * ERROR_TIGHTENING
        } else {
            self.generation_error()
        }
    }
}

/// The option bits a generation's chain may carry: RedisBloom's, and spread probes (which
/// [`Generation::check_shape`] holds to the window's flag).
const GENERATION_OPTIONS: u32 = OPT_ALL | OPT_SPREAD;

/// A generation of RedisBloom links: the stored form of `bloomrsWN` values.
impl Generation for Chain {
    const MAGIC: &'static [u8; 8] = b"bloomrsW";
    const ENCODING_VERSION: i32 = 1;
    const KEYED: bool = false;
    const GENERATION_OVERHEAD: u64 = 16;
    const SPREADS: bool = true;

    fn window_overhead() -> u64 {
        64
    }

    fn hash(item: &[u8]) -> ItemHash {
        // Every generation hashes with MurmurHash64A (the validator insists on it).
        ItemHash::of(item, true)
    }

    fn check_params(_params: &WindowParams) -> Result<(), &'static str> {
        Ok(())
    }

    fn build(params: &WindowParams, _secret: u64, room: u64) -> Result<Self, CreateError> {
        let chain = Chain::new(
            params.generation_capacity(),
            params.generation_error(),
            params.growth,
            params.scaling,
            room,
        )?;
        Ok(if params.spread {
            chain.with_spread_probes()
        } else {
            chain
        })
    }

    fn size_for(params: &WindowParams) -> Result<u64, CreateError> {
        // Its first link takes the generation's share before the chain grows.
        Chain::<crate::bloom::Link>::size_for(
            params.generation_capacity(),
            params.generation_error(),
            params.scaling,
        )
    }

    fn contains_hash(&self, hash: ItemHash) -> bool {
        Chain::contains_hash(self, hash)
    }
    fn add_hash(
        &mut self,
        hash: ItemHash,
        _params: &WindowParams,
        budget: impl Budget,
    ) -> Result<bool, AddError> {
        Chain::add_hash(self, hash, budget)
    }
    fn is_loaded(&self) -> bool {
        true
    }
    fn items(&self) -> u64 {
        self.size
    }
    fn capacity(&self, _params: &WindowParams) -> u64 {
        Chain::capacity(self)
    }
    fn filters(&self) -> u64 {
        self.links.len() as u64
    }
    fn bytes(&self) -> u64 {
        self.reported_bytes()
    }

    fn check_shape(&self, p: &WindowParams, _secret: u64) -> Result<(), LoadError> {
        let first = self.links.first().ok_or(LoadError::Invalid("no links"))?;
        if self.options != p.chain_options() || self.growth != p.growth {
            return Err(LoadError::Invalid(
                "generation options differ from the window's",
            ));
        }
        if first.entries != p.generation_capacity() || first.error != p.first_link_error() {
            return Err(LoadError::Invalid("generation sized for another window"));
        }
        Ok(())
    }

    fn save(&self, _params: &WindowParams, w: &mut impl RdbWrite) {
        Chain::save(self, w);
    }
    fn load(
        r: &mut impl RdbRead,
        _params: &WindowParams,
        max_bytes: u64,
    ) -> Result<Self, LoadError> {
        Chain::read_with(
            r,
            crate::bloom::ENCODING_VERSION,
            max_bytes,
            GENERATION_OPTIONS,
        )
    }
    fn encode_header(&self, _params: &WindowParams) -> Vec<u8> {
        Chain::encode_header(self)
    }
    fn from_header(
        header: &[u8],
        _params: &WindowParams,
        max_bytes: u64,
    ) -> Result<Self, HeaderError> {
        Chain::decode_header_with(header, max_bytes, GENERATION_OPTIONS)
    }
    fn span(&self) -> u64 {
        self.link_bytes()
    }
    fn positions(data: &[u8]) -> Option<u64> {
        Some(data.len() as u64)
    }
    fn chunk_at(
        &self,
        _params: &WindowParams,
        iter: i64,
        limit: u64,
    ) -> Option<(i64, Cow<'_, [u8]>)> {
        Chain::chunk_within(self, iter, limit).map(|c| (c.next, Cow::Borrowed(c.bytes)))
    }
    fn load_chunk(
        &mut self,
        _params: &WindowParams,
        iter: i64,
        data: &[u8],
        _max_bytes: u64,
    ) -> Result<(), ChunkError> {
        Chain::load_chunk(self, iter, data)
    }
}
