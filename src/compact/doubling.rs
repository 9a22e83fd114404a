//! Incremental doubling: a full table is replaced by one twice its size a few quotients at a
//! time, so no command rebuilds the whole table (a doubling at once took 402 ms at 10M
//! items in one `BF.MADD`).
//!
//! When an add finds the table at its load limit, a table twice the size is allocated (fresh
//! zeroed pages: no pass of writes) and becomes the filter's table; the old one is kept with
//! a cursor. Every old quotient below the cursor has been moved: each of its entries went to
//! new quotient `2x + half` exactly as a whole doubling moves it (one fingerprint bit into the
//! quotient, void entries into both halves, equal fields merged). Each write (every item of
//! an add or delete command) first moves the runs of the next [`MIGRATED_PER_WRITE`] old
//! quotients, whole; when the cursor passes the last quotient the old table is dropped.
//! Progress is a function of the commands applied, never of time, so a replica or a reloaded
//! copy given the same commands reaches the same bytes.
//!
//! Meanwhile a lookup reads the new table, and the old one too when the item's old quotient
//! is not moved yet (two runs read); adds go to the new table only; a delete takes one count
//! off the longest matching entry of the two, comparing all the hash bits an entry holds
//! (quotient and fingerprint), so the module notes' argument holds across both tables.
//!
//! Room. `moved` is kept exactly, for every table: the slots its runs would take in the next
//! table (each run's entries split into halves and merged as a move merges them). During a
//! doubling, `pending` is the same for the old quotients not moved yet, and `reserve` counts
//! the entries adds put in the new table beside an old entry that may merge with them when it
//! moves (a merge of two counts may take one slot more than the two did apart). An add needs
//! `entries + pending + reserve + 2 <= max_entries(new slots)`; a move never increases that
//! sum (a move's own slots came out of `pending`, a merge's extra slot out of `reserve`). So
//! a doubling is started only when everything it must move plus the add fits (F1, refused with
//! nothing changed otherwise), and the new table never passes its load limit.

use super::counters::{digits, Element};
use super::table::{Fingerprint, Table};
use super::{AddError, Compact};

/// Old quotients moved before each write: 16 runs, each whole. Why the doubling ends long
/// before the new table fills: it starts with `pending <= max_entries(old) + voids`, about
/// 0.9 of the old slots `S` plus the void entries' copies, against `1.8 S` in the new table;
/// it ends after `S / 16` writes, which add at most 2 slots each: `S / 8`. Only a table whose
/// void entries nearly fill it (crafted values; voids need many doublings with one slot
/// width) can run out of room first; then the add finishes the doubling in one go (the one
/// unbounded case, see `make_room`).
pub const MIGRATED_PER_WRITE: u64 = 16;

/// A doubling in progress: the old table and how far its quotients were moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Doubling {
    /// The table before the doubling (its quotients below `cursor` are stale, never read).
    pub(crate) old: Table,
    /// Old quotients below this one have been moved to the new table.
    pub(crate) cursor: u64,
    /// Slots the old quotients from `cursor` on take once moved (derived, kept exact).
    pub(crate) pending: u64,
    /// Adds' entries in the new table that may merge with an old entry when it moves.
    pub(crate) reserve: u64,
}

/// The table a doubling starts.
struct NextTable {
    log2_slots: u32,
    generation: u32,
    width: u32,
    fresh_bits: u32,
}

/// The entries of a run as the next table holds them, half by half: each fingerprint loses
/// its first bit to the quotient (void ones go to both halves), equal ones merged (counts
/// added when deletable, one kept otherwise), in field order.
pub fn split(
    elements: impl Iterator<Item = Element>,
    width: u32,
    next_width: u32,
    deletable: bool,
) -> [Vec<(u64, u64)>; 2] {
    let mut halves: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
    split_into(elements, width, next_width, deletable, &mut halves);
    halves
}

/// [`split`] into `halves`, whose buffers a walk over many runs reuses.
pub(super) fn split_into(
    elements: impl Iterator<Item = Element>,
    width: u32,
    next_width: u32,
    deletable: bool,
    halves: &mut [Vec<(u64, u64)>; 2],
) {
    halves.iter_mut().for_each(Vec::clear);
    for e in elements {
        let fp = Fingerprint::of_field(e.field, width);
        for (half, moved) in halves.iter_mut().enumerate() {
            let kept = match fp.len {
                0 => fp,
                len if fp.bits >> (len - 1) == half as u64 => Fingerprint {
                    bits: fp.bits & ((1u64 << (len - 1)) - 1),
                    len: len - 1,
                },
                _ => continue,
            };
            moved.push((kept.field(next_width), e.count));
        }
    }
    for moved in halves.iter_mut() {
        // Equal fingerprints merge: voids copied into both halves and entries whose last bit
        // moved, or an older encoding's repeated entries.
        moved.sort_unstable_by_key(|(field, _)| *field);
        moved.dedup_by(|(field, count), (kept, total)| {
            let same = field == kept;
            if same && deletable {
                *total = total.saturating_add(*count);
            }
            same
        });
    }
}

/// Slots the split entries take: each entry and its counter's pairs.
pub fn cost(halves: &[impl AsRef<[(u64, u64)]>; 2], next_width: u32) -> u64 {
    halves
        .iter()
        .flat_map(AsRef::as_ref)
        .map(|&(_, count)| 1 + 2 * digits(count, next_width).count() as u64)
        .sum()
}

/// Quotient `x`'s run of `table` split for the next table (empty halves when it has none).
pub fn run_split(table: &Table, x: u64, next_width: u32, deletable: bool) -> [Vec<(u64, u64)>; 2] {
    match table.run(x) {
        Some(run) => split(table.run_elements(run), table.width, next_width, deletable),
        None => [Vec::new(), Vec::new()],
    }
}

/// Runs up to this many entries long are costed without splitting them.
const SHORT_RUN: usize = 8;

/// Slots quotient `x`'s run of `table` takes in the next table (see [`elements_cost`]).
pub fn run_cost(table: &Table, x: u64, next_width: u32, deletable: bool) -> u64 {
    let Some(run) = table.run(x) else {
        return 0;
    };
    elements_cost(
        || table.run_elements(run),
        table.width,
        next_width,
        deletable,
    )
}

/// Slots a run's entries (`elements()`, read again when needed) take in the next table.
/// Every add and delete asks (twice), and the loader for every run, so the usual run is
/// read once without splitting it: when its entries are few, all different and none shorter
/// than two bits, none of them can meet another in the next table (only voids do: copied
/// ones, and the ones one-bit fingerprints become), and each takes its entry and its
/// counter's pairs. Any other run is split as a move splits it.
pub fn elements_cost<I: Iterator<Item = Element>>(
    elements: impl Fn() -> I,
    width: u32,
    next_width: u32,
    deletable: bool,
) -> u64 {
    let mut seen = [0u64; SHORT_RUN];
    let mut total = 0u64;
    for (k, e) in elements().enumerate() {
        let alone = Fingerprint::of_field(e.field, width).len >= 2
            && !seen.iter().take(k).any(|f| *f == e.field);
        match seen.get_mut(k) {
            Some(slot) if alone => *slot = e.field,
            _ => {
                let halves = split(elements(), width, next_width, deletable);
                return cost(&halves, next_width);
            }
        }
        total = total.saturating_add(1 + 2 * digits(e.count, next_width).count() as u64);
    }
    total
}

impl Doubling {
    /// Whether the old table holds a fingerprint matching `hash` at a quotient not moved yet.
    #[inline]
    pub fn holds(&self, hash: crate::bloom::ItemHash) -> bool {
        let (x, query) = super::locate(&self.old, hash);
        x >= self.cursor && self.old.contains(x, query)
    }
}

impl Compact {
    /// Field bits of the table after the current one (see [`super::next_width`]).
    pub(crate) fn next_width(&self) -> u32 {
        self.next_width
    }

    /// Slots the current table's quotient `x` takes in the next table.
    pub(crate) fn cost_at(&self, x: u64) -> u64 {
        run_cost(&self.table, x, self.next_width(), self.deletable)
    }

    /// `moved` after quotient `x`'s run changed from costing `before`.
    pub(crate) fn recost(&mut self, x: u64, before: u64) {
        let after = self.cost_at(x);
        self.moved = self.moved.saturating_sub(before).saturating_add(after);
    }

    /// Slots in use, and promised to the moves and merges still to come.
    pub(crate) fn committed(&self) -> u64 {
        let promised = self
            .doubling
            .as_ref()
            .map_or(0, |d| d.pending.saturating_add(d.reserve));
        self.entries.saturating_add(promised)
    }

    /// Starts doubling: the new table (zeroed lazily) becomes the filter's, the old one is
    /// kept. Refused with nothing changed when the largest table, the slot width, or the
    /// budget (both tables are held until the doubling ends) do not allow it, or when what
    /// the old table moves and the add that asked would not fit the new table (F1).
    pub(crate) fn start_doubling(
        &mut self,
        budget: &impl crate::budget::Budget,
    ) -> Result<(), AddError> {
        let next = self.next_doubling(self.moved, self.bytes(), budget)?;
        let bigger = Table::new(next.log2_slots, next.width).ok_or(AddError::CannotGrow)?;
        let old = std::mem::replace(&mut self.table, bigger);
        self.doubling = Some(Doubling {
            old,
            cursor: 0,
            pending: self.moved,
            reserve: 0,
        });
        self.moved = 0;
        self.entries = 0;
        self.generation = next.generation;
        self.fresh_bits = next.fresh_bits;
        self.next_width = super::next_width(self.error, next.generation, next.width);
        self.received = self.stream_len();
        Ok(())
    }

    /// The shape of the doubling a filter whose table's runs take `moved` slots in the next
    /// table and whose value has `bytes` bytes would start, or why it cannot.
    fn next_doubling(
        &self,
        moved: u64,
        bytes: u64,
        budget: &impl crate::budget::Budget,
    ) -> Result<NextTable, AddError> {
        let log2_slots = self.table.log2_slots + 1;
        let generation = self.generation + 1;
        if log2_slots > super::MAX_LOG2_SLOTS {
            return Err(AddError::CannotGrow);
        }
        let width = super::width_for(self.error, generation).ok_or(AddError::CannotGrow)?;
        let fresh_bits =
            super::fingerprint_bits(self.error, generation).ok_or(AddError::CannotGrow)?;
        let room = moved.saturating_add(super::MOST_AN_ADD_NEEDS)
            <= super::max_entries(1u64 << log2_slots);
        if !room {
            return Err(AddError::CannotGrow);
        }
        let size = super::table::table_bytes(log2_slots, width)
            .and_then(|t| t.checked_add(super::table::offset_bytes(log2_slots)))
            .and_then(|t| t.checked_add(bytes));
        if size.is_none_or(|size| size > budget.limit(bytes)) {
            return Err(AddError::CannotGrow);
        }
        Ok(NextTable {
            log2_slots,
            generation,
            width,
            fresh_bits,
        })
    }

    /// Moves the runs of the next `quotients` old quotients (all of them: `u64::MAX`),
    /// dropping the old table when its last quotient moved. False only for a table that does
    /// not describe runs, which the validator refuses.
    pub(crate) fn migrate(&mut self, quotients: u64) -> bool {
        for _ in 0..quotients {
            let Some(d) = &self.doubling else {
                return true;
            };
            if d.cursor >= d.old.slots() {
                break;
            }
            if !self.migrate_next() {
                return false;
            }
        }
        if self
            .doubling
            .as_ref()
            .is_some_and(|d| d.cursor >= d.old.slots())
        {
            self.doubling = None;
            self.received = self.stream_len();
        }
        true
    }

    /// Moves the run of the old quotient at the cursor into new quotients `2x` and `2x + 1`,
    /// merging with what adds put there.
    fn migrate_next(&mut self) -> bool {
        let (deletable, width) = (self.deletable, self.table.width);
        let Some(d) = &self.doubling else {
            return true;
        };
        let x = d.cursor;
        let halves = run_split(&d.old, x, width, deletable);
        let moving = cost(&halves, width);
        let mut merges = 0u64;
        for (half, moved) in (0u64..).zip(&halves) {
            if moved.is_empty() {
                continue;
            }
            let q = 2 * x + half;
            let before = self.cost_at(q);
            for &(field, count) in moved {
                let used = match self.equal(q, field) {
                    Some(e) => {
                        merges += 1;
                        self.merge(q, e, count)
                    }
                    None => self.place(q, field, count),
                };
                let Some(used) = used else {
                    return false;
                };
                self.entries = self.entries.saturating_add_signed(used);
            }
            self.recost(q, before);
        }
        if let Some(d) = &mut self.doubling {
            d.pending = d.pending.saturating_sub(moving);
            d.reserve = d.reserve.saturating_sub(merges);
            d.cursor += 1;
        }
        true
    }

    /// Adds `count` to the new table's `element` of quotient `q` (keeps one when not
    /// deletable): the slots it took.
    fn merge(&mut self, q: u64, element: Element, count: u64) -> Option<i64> {
        if !self.deletable {
            return Some(0);
        }
        let total = element.count.saturating_add(count);
        self.table.set_count(q, element, total)
    }

    /// A new entry of `field` counted `count` times in quotient `q`'s run: the slots it took.
    fn place(&mut self, q: u64, field: u64, count: u64) -> Option<i64> {
        if !self.table.insert(q, field) {
            return None;
        }
        if count == 1 {
            return Some(1);
        }
        let e = self.equal(q, field)?;
        Some(1 + self.table.set_count(q, e, count)?)
    }

    /// Makes room for an add of up to [`super::MOST_AN_ADD_NEEDS`] slots: nothing to do when
    /// it fits; else a doubling in progress is finished at once (only for tables crowded with
    /// void entries, or values whose reserve claims the room: the one case whose work is not
    /// bounded per write, metered as a doubling), and a new doubling is started when still
    /// needed. A refusal leaves the filter as it was (a refused add is not propagated, so a
    /// replica must not see the finished doubling either): what finishing leaves is worked
    /// out first without changing anything ([`Compact::finish_plan`]), and the doubling after
    /// it is admitted before the first move, so no copy of the filter is ever taken (issue
    /// 35: a copy for the rollback took the whole value's bytes outside memory admission).
    pub(crate) fn make_room(
        &mut self,
        budget: &impl crate::budget::Budget,
    ) -> Result<(), AddError> {
        let limit = super::max_entries(self.table.slots());
        if self.committed().saturating_add(super::MOST_AN_ADD_NEEDS) <= limit {
            return Ok(());
        }
        let Some(old) = self.doubling.as_ref().map(|d| &d.old) else {
            return self.start_doubling(budget);
        };
        // The value's bytes once the old table is dropped.
        let old_held = old.bytes.len() as u64 + 2 * old.offsets.len() as u64;
        let slots = 3 * self.table.slots();
        let plan =
            super::meter::doubling(slots, || self.finish_plan()).ok_or(AddError::CannotGrow)?;
        let roomy = plan.entries.saturating_add(super::MOST_AN_ADD_NEEDS) <= limit;
        if !roomy {
            let bytes = self.bytes().saturating_sub(old_held);
            self.next_doubling(plan.moved, bytes, budget)?;
        }
        if !super::meter::doubling(slots, || self.migrate(u64::MAX)) {
            return Err(AddError::CannotGrow);
        }
        if roomy {
            return Ok(());
        }
        self.start_doubling(budget)
    }
}

/// What finishing a doubling at once leaves, worked out without changing anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Finish {
    /// Slots in use in the new table.
    pub entries: u64,
    /// The new table's `moved`: the slots its runs would take in the next table.
    pub moved: u64,
    /// Moved entries that meet an equal one adds put in the new table (each may take a slot
    /// more than the two apart: the reserve must cover them).
    pub merges: u64,
}

impl Compact {
    /// [`Finish`] for the doubling in progress (None without one): every new quotient's run
    /// with what its old quotient still moves into it, merged as moves merge, costed. Reads
    /// each run once; holds one run at a time.
    pub(crate) fn finish_plan(&self) -> Option<Finish> {
        let d = self.doubling.as_ref()?;
        let (width, next, deletable) = (self.table.width, self.next_width(), self.deletable);
        let mut plan = Finish {
            entries: 0,
            moved: 0,
            merges: 0,
        };
        // Buffers reused run after run.
        let mut halves: [Vec<(u64, u64)>; 2] = Default::default();
        let (mut run, mut placed) = (Vec::new(), Vec::new());
        for y in 0..self.table.slots() {
            let (x, half) = (y >> 1, (y & 1) as usize);
            if half == 0 {
                halves.iter_mut().for_each(Vec::clear);
                if let Some(old_run) = d.old.run(x).filter(|_| x >= d.cursor) {
                    let elements = d.old.run_elements(old_run);
                    split_into(elements, d.old.width, width, deletable, &mut halves);
                }
            }
            run.clear();
            if let Some(new_run) = self.table.run(y) {
                let elements = self.table.run_elements(new_run);
                run.extend(elements.map(|e| (e.field, e.count)));
            }
            let moving = halves.get(half).map_or(&[][..], Vec::as_slice);
            let quotient = planned(&mut run, moving, &mut placed, (width, next), deletable);
            plan.add(quotient);
        }
        Some(plan)
    }
}

impl Finish {
    pub(super) fn add(&mut self, other: Finish) {
        self.entries = self.entries.saturating_add(other.entries);
        self.moved = self.moved.saturating_add(other.moved);
        self.merges = self.merges.saturating_add(other.merges);
    }
}

/// What one new quotient gives a [`Finish`]: its run (`run`, as `(field, count)` in any
/// order; reordered) with what its old quotient still moves into it (`moving`), merged as a
/// move merges them, in a table of `widths` (its own and the next table's). `placed` is a
/// buffer.
pub(super) fn planned(
    run: &mut Vec<(u64, u64)>,
    moving: &[(u64, u64)],
    placed: &mut Vec<(u64, u64)>,
    (width, next): (u32, u32),
    deletable: bool,
) -> Finish {
    if run.is_empty() {
        // What moves in alone (the usual quotient, far from the cursor): no merge.
        let elements = || {
            moving
                .iter()
                .map(|&(field, count)| Element::of(field, count))
        };
        return Finish {
            entries: cost(&[moving, &[]], width),
            moved: elements_cost(elements, width, next, deletable),
            merges: 0,
        };
    }
    run.sort_unstable();
    placed.clear();
    let mut merges = 0;
    for &(field, count) in moving {
        match run.binary_search_by_key(&field, |(f, _)| *f) {
            Ok(k) => {
                merges += 1;
                if let Some((_, total)) = run.get_mut(k).filter(|_| deletable) {
                    *total = total.saturating_add(count);
                }
            }
            Err(_) => placed.push((field, count)),
        }
    }
    run.append(placed);
    let elements = || run.iter().map(|&(field, count)| Element::of(field, count));
    Finish {
        entries: cost(&[run.as_slice(), &[]], width),
        moved: elements_cost(elements, width, next, deletable),
        merges,
    }
}

/// The longest fingerprint of quotient `x`'s run in `table` matching `query`, as the hash
/// bits it holds (quotient and fingerprint) with its element and run.
pub fn longest(table: &Table, x: u64, query: u64) -> Option<(u32, Element, (u64, u64))> {
    let run = table.run(x)?;
    table
        .run_elements(run)
        .filter(|e| Fingerprint::matches(e.field, query))
        .map(|e| {
            (
                Fingerprint::of_field(e.field, table.width).len + table.log2_slots,
                e,
                run,
            )
        })
        .reduce(|best, this| if this.0 > best.0 { this } else { best })
}

/// Takes one count off `element` of quotient `x`'s run: the slots it freed (negative), None
/// if the table had no room for a counter's rewrite (an inconsistent table only).
pub fn take_one(table: &mut Table, x: u64, run: (u64, u64), element: Element) -> Option<i64> {
    if element.count > 1 {
        table.set_count(x, element, element.count - 1)
    } else {
        table.remove(x, run, element.at);
        Some(-1)
    }
}
