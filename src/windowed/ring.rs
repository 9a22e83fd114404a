//! The ring of a window's held generations, oldest first: one place per generation and no
//! spare ones, in a pointer and a length. A window holds at most `g` generations and most
//! hold one or two, so the places are reallocated on each change (once a slot), where a
//! growable queue would keep a capacity and a head beside them in every idle key.

use std::ops::{Deref, DerefMut};

#[derive(Debug, Clone, PartialEq)]
pub struct Ring<T>(Box<[T]>);

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring(Box::default())
    }
}

impl<T> Ring<T> {
    pub fn new() -> Self {
        Ring::default()
    }

    /// Appends the newest generation.
    pub fn push_back(&mut self, value: T) {
        self.edit(|places| {
            places.reserve_exact(1);
            places.push(value);
        });
    }

    /// Removes the oldest generation.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.0.is_empty() {
            return None;
        }
        let mut oldest = None;
        self.edit(|places| oldest = Some(places.remove(0)));
        oldest
    }

    /// Removes the newest generation.
    pub fn pop_back(&mut self) -> Option<T> {
        let mut newest = None;
        self.edit(|places| newest = places.pop());
        newest
    }

    /// Changes the places as a vector, then keeps exactly as many as it holds.
    fn edit(&mut self, change: impl FnOnce(&mut Vec<T>)) {
        let mut places = std::mem::take(&mut self.0).into_vec();
        change(&mut places);
        self.0 = places.into_boxed_slice();
    }
}

impl<T> From<Vec<T>> for Ring<T> {
    fn from(places: Vec<T>) -> Self {
        Ring(places.into_boxed_slice())
    }
}

impl<T> Deref for Ring<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for Ring<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<'a, T> IntoIterator for &'a Ring<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Ring<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    #[test]
    fn holds_exactly_its_places_in_order() {
        let mut ring = Ring::new();
        assert_eq!(ring.pop_front(), None);
        assert_eq!(ring.pop_back(), None);
        for i in 0..5 {
            ring.push_back(i);
        }
        assert_eq!(&ring[..], &[0, 1, 2, 3, 4]);
        assert_eq!(ring.pop_front(), Some(0));
        assert_eq!(ring.pop_back(), Some(4));
        assert_eq!(&ring[..], &[1, 2, 3]);
        assert_eq!((ring.first(), ring.last()), (Some(&1), Some(&3)));
        assert_eq!(std::mem::size_of::<Ring<u64>>(), 16);
    }
}
