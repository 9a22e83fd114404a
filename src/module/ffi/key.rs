//! Keys as commands open them: what a key holds, seen as one module type or as one family of
//! them ([`Slot`], [`Member`]), storing a new value, expiry, and the totals of `state::stats`
//! kept up to date with what a write command changed.

use std::ffi::{c_int, c_void};

use redis_module::raw;

use super::raw::{api, RawCtx, RawString};
use crate::module::state::stats::{Measure, Measured, Totals};

/// An open key; closed on drop. A key opened for writing remembers the measure of the value
/// it first handed out (or stored), and on drop adds what the command changed to the totals.
pub struct Key {
    ptr: *mut raw::RedisModuleKey,
    write: bool,
    tracking: Option<Tracking>,
}

/// The measure of a value before a write command touched it.
struct Tracking {
    before: Measure,
    measure: fn(*const c_void) -> Measure,
    totals: &'static Totals,
}

/// The measure of a value stored as a `T`.
fn measure_raw<T: Measured>(value: *const c_void) -> Measure {
    // SAFETY: only called with the value pointer of a key whose type stores `T`.
    unsafe { value.cast::<T>().as_ref() }.map_or(Measure::default(), Measured::measure)
}

/// What an open key holds, seen from one module type (or one family of them).
pub enum Slot<'k, T: ?Sized> {
    Empty,
    Ours(&'k mut T),
    WrongType,
}

/// What a key holds, before it is cast to the type it belongs to.
enum Stored {
    Empty,
    Ours(*mut c_void),
    Other,
}

/// One module type of a family whose values are all read through the same `V` (a trait
/// object): how to see a stored value as a `V`, and how to measure it for the totals.
pub struct Member<V: ?Sized + 'static> {
    pub ty: &'static redis_module::native_types::RedisType,
    /// Casts a value pointer of `ty` to the `V` it implements (no dereference).
    pub view: fn(*mut c_void) -> *mut V,
    pub measure: fn(*const c_void) -> Measure,
    pub totals: fn() -> &'static Totals,
}

impl<V: ?Sized> Member<V> {
    /// The member for module type `ty`, whose values are all `T`; `view` is the unsizing cast
    /// from `T` to `V` (`|p| p.cast::<T>() as *mut V`).
    pub const fn new<T: Measured>(
        ty: &'static redis_module::native_types::RedisType,
        view: fn(*mut c_void) -> *mut V,
    ) -> Self {
        Member {
            ty,
            view,
            measure: measure_raw::<T>,
            totals: T::totals,
        }
    }
}

impl Key {
    /// Opens `name` in the calling context `ctx`.
    pub(super) fn open(ctx: RawCtx, name: RawString, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: `name` is a live argument; the key is closed when `Key` drops, before the
        // command returns.
        let ptr = unsafe { api!(RedisModule_OpenKey)(ctx, name, mode as c_int) };
        Key {
            ptr: ptr.cast(),
            write,
            tracking: None,
        }
    }
    /// The key's value if it is of `ty`, whose values are all `T`.
    pub fn slot<T: Measured>(&mut self, ty: &redis_module::native_types::RedisType) -> Slot<'_, T> {
        match self.value_of(|key_type| key_type == *ty.raw_type.borrow()) {
            Stored::Empty => Slot::Empty,
            Stored::Other => Slot::WrongType,
            Stored::Ours(value) => {
                self.track(value, measure_raw::<T>, T::totals());
                // SAFETY: a value of `ty` was stored by `set` as a `Box<T>` of the `T` that
                // belongs to this type, so the cast is to its real type; it lives while the
                // key is open.
                unsafe { value.cast::<T>().as_mut() }.map_or(Slot::WrongType, Slot::Ours)
            }
        }
    }

    /// The key's value if it is of one of the `family`'s types, seen as their common `V`.
    pub fn slot_in<'f, V: ?Sized + 'static>(
        &mut self,
        family: impl IntoIterator<Item = &'f Member<V>>,
    ) -> Slot<'_, V> {
        let mut found = None;
        let stored = self.value_of(|key_type| {
            found = family
                .into_iter()
                .find(|member| key_type == *member.ty.raw_type.borrow());
            found.is_some()
        });
        match (stored, found) {
            (Stored::Ours(value), Some(member)) => {
                if self.write {
                    self.track(value, member.measure, (member.totals)());
                }
                // SAFETY: the value is of `member.ty`, whose values are all the `T` that
                // `member.view` casts from (both fixed together by `Member::new`); it lives
                // while the key is open.
                unsafe { (member.view)(value).as_mut() }.map_or(Slot::WrongType, Slot::Ours)
            }
            (Stored::Empty, _) => Slot::Empty,
            _ => Slot::WrongType,
        }
    }

    /// The key's value pointer if its module type passes `ours`.
    fn value_of(&self, ours: impl FnOnce(*mut raw::RedisModuleType) -> bool) -> Stored {
        // SAFETY: `ptr` is an open key (or null for a missing key opened read-only, which the
        // API treats as empty).
        unsafe {
            if self.ptr.is_null() {
                return Stored::Empty;
            }
            // A module value's type, null for an empty key or a value of a built-in type
            // (only then is the key's type asked: the usual key holds a filter).
            let key_type = api!(RedisModule_ModuleTypeGetType)(self.ptr);
            if key_type.is_null() {
                let empty =
                    api!(RedisModule_KeyType)(self.ptr) == raw::REDISMODULE_KEYTYPE_EMPTY as c_int;
                return if empty { Stored::Empty } else { Stored::Other };
            }
            if !ours(key_type) {
                return Stored::Other;
            }
            let value = api!(RedisModule_ModuleTypeGetValue)(self.ptr);
            if value.is_null() {
                Stored::Other
            } else {
                Stored::Ours(value)
            }
        }
    }

    /// Stores a new value of `ty` in this writable key, replacing (and freeing) the value it
    /// held, if any.
    pub fn set<T: Measured>(
        &mut self,
        ty: &redis_module::native_types::RedisType,
        value: T,
    ) -> &mut T {
        self.settle();
        let boxed = Box::into_raw(Box::new(value));
        if self.write {
            self.tracking = Some(Tracking {
                before: Measure::default(),
                measure: measure_raw::<T>,
                totals: T::totals(),
            });
        }
        // SAFETY: the key is open for writing; Redis owns the box from here and hands it back
        // to the type's free callback, which rebuilds the `Box<T>`.
        unsafe {
            api!(RedisModule_ModuleTypeSetValue)(self.ptr, *ty.raw_type.borrow(), boxed.cast());
            &mut *boxed
        }
    }

    /// The Unix time in milliseconds the key expires at, if it has an expiry.
    pub fn expire_at(&self) -> Option<i64> {
        // SAFETY: `ptr` is an open key; an empty key or one without expiry answers -1.
        let at = unsafe { api!(RedisModule_GetAbsExpire)(self.ptr) };
        (at >= 0).then_some(at)
    }

    /// Sets the key to expire at `at_ms`, clamped to what the server stores (an i64);
    /// returns the time applied, which is what a replica must be told.
    pub fn set_expire_at(&mut self, at_ms: u64) -> i64 {
        let at = i64::try_from(at_ms).unwrap_or(i64::MAX);
        // SAFETY: `ptr` is an open key; the call fails harmlessly on an empty key.
        unsafe { api!(RedisModule_SetAbsExpire)(self.ptr, at) };
        at
    }

    /// Remembers the measure of the value a write command is about to change.
    fn track(
        &mut self,
        value: *mut c_void,
        measure: fn(*const c_void) -> Measure,
        totals: &'static Totals,
    ) {
        if self.write && self.tracking.is_none() {
            self.tracking = Some(Tracking {
                before: measure(value),
                measure,
                totals,
            });
        }
    }

    /// Adds what the command changed in the key's value to the totals, and stops tracking it
    /// (the value is about to be replaced, or the key closed).
    fn settle(&mut self) {
        let Some(tracking) = self.tracking.take() else {
            return;
        };
        // SAFETY: `ptr` is open; the value, if any, is the one `tracking` was made for.
        let value = unsafe { api!(RedisModule_ModuleTypeGetValue)(self.ptr) };
        tracking
            .totals
            .change(tracking.before, (tracking.measure)(value));
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        self.settle();
        // SAFETY: `ptr` was opened by `open_key` and is still open; it is closed exactly once.
        unsafe { api!(RedisModule_CloseKey)(self.ptr) };
    }
}
