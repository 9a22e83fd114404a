//! How much memory a filter may take: the question every allocating path of the core asks
//! before it allocates. A plain `u64` is a fixed cap on the filter's reported size; the Redis
//! layer answers with the cap and what `maxmemory` still allows (deviation D13).

/// The most bytes (as the filter reports its size) a filter may reach.
pub trait Budget {
    /// The limit for a filter that has `current` bytes now and is about to grow; a new filter
    /// asks with `current` 0. Asked only when an allocation is about to happen, so an add
    /// that finds room pays nothing.
    fn limit(&self, current: u64) -> u64;
}

/// A fixed cap, whatever the filter holds now.
impl Budget for u64 {
    fn limit(&self, _current: u64) -> u64 {
        *self
    }
}

impl<B: Budget + ?Sized> Budget for &B {
    fn limit(&self, current: u64) -> u64 {
        (**self).limit(current)
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;
    use crate::bloom::{AddError, Chain};
    use crate::cuckoo::{CuckooFilter, CuckooParams, InsertError};
    use std::cell::RefCell;

    /// A budget that records every question and answers with a fixed limit.
    struct Recorder {
        limit: u64,
        asked: RefCell<Vec<u64>>,
    }

    impl Recorder {
        fn new(limit: u64) -> Self {
            Recorder {
                limit,
                asked: RefCell::new(Vec::new()),
            }
        }
    }

    impl Budget for Recorder {
        fn limit(&self, current: u64) -> u64 {
            self.asked.borrow_mut().push(current);
            self.limit
        }
    }

    #[test]
    fn a_bloom_chain_asks_only_when_it_grows_and_says_how_large_it_is() {
        let mut chain = Chain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        let budget = Recorder::new(u64::MAX);
        for i in 0..100 {
            chain.add(format!("item{i}").as_bytes(), &budget).unwrap();
        }
        assert!(budget.asked.borrow().is_empty());
        let before = chain.reported_bytes();
        let mut i = 100;
        while chain.links.len() == 1 {
            chain.add(format!("item{i}").as_bytes(), &budget).unwrap();
            i += 1;
        }
        assert_eq!(*budget.asked.borrow(), vec![before]);
    }

    #[test]
    fn a_bloom_chain_refused_by_its_budget_stays_as_it_was() {
        let mut chain = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        let mut refused = None;
        for i in 0..100 {
            let before = chain.clone();
            // Room for the chain as it is, and not one byte more.
            let budget = Recorder::new(chain.reported_bytes());
            if let Err(e) = chain.add(format!("item{i}").as_bytes(), &budget) {
                assert_eq!(chain.links.len(), before.links.len());
                assert_eq!(chain.size, before.size);
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused, Some(AddError::CannotGrow));
    }

    #[test]
    fn a_cuckoo_filter_asks_only_when_it_grows_and_says_how_large_it_is() {
        let params = CuckooParams {
            capacity: 64,
            ..CuckooParams::default()
        };
        let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
        let budget = Recorder::new(u64::MAX);
        let mut i = 0;
        while filter.num_filters() == 1 {
            let asked_before = budget.asked.borrow().len();
            let size_before = filter.size_bytes();
            filter
                .insert(format!("item{i}").as_bytes(), &budget)
                .unwrap();
            if filter.num_filters() == 1 {
                assert_eq!(budget.asked.borrow().len(), asked_before);
            } else {
                assert_eq!(budget.asked.borrow().last(), Some(&size_before));
            }
            i += 1;
        }
        // Refused growth: the same item is not inserted and nothing is allocated.
        let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
        let tight = Recorder::new(filter.size_bytes());
        let outcome = (0..1000)
            .map(|i| filter.insert(format!("item{i}").as_bytes(), &tight))
            .find(Result::is_err);
        assert_eq!(outcome, Some(Err(InsertError::OutOfMemory)));
        assert_eq!(filter.num_filters(), 1);
    }
}
