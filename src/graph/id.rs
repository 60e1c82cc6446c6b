//! An edge's endpoint: an entity id whose text is shared, not copied.
//!
//! The Linux tree has 3.15M edges between 965k entities; with each end a
//! `String` of its own, the edges were a third of `init`'s heap. An
//! [`Interner`] hands every edge that names an entity the same text.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::sync::Arc;

/// An entity id (see [`super::EntityId`] for its shape), or another text
/// many records repeat (an entity's lifter, leaf and flavor); cheap to
/// clone: copies share one allocation. Compares, orders and hashes as its
/// text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Id(Arc<str>);

/// Read from borrowed text where the format allows (postcard records do):
/// serde's own `Arc<str>` goes through a `Box<str>` first, two allocations
/// and a copy for every edge end and entity field a hook decodes.
impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Id;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Id, E> {
                Ok(match s.is_empty() {
                    true => Id::default(),
                    false => Id::from(s),
                })
            }
        }
        d.deserialize_str(Text)
    }
}

/// The empty id, one text for all: most entities have no flavor, and every
/// one has no leaf until the hierarchy places it.
impl Default for Id {
    fn default() -> Id {
        static EMPTY: std::sync::LazyLock<Id> = std::sync::LazyLock::new(|| Id(Arc::from("")));
        EMPTY.clone()
    }
}

impl Id {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A text of the parsers' own small vocabulary (a flavor: `def`,
    /// `macro`, …), one allocation for each entity that has it, for the
    /// life of the process. Never for text read from a repository, which
    /// could grow the vocabulary without bound.
    pub fn common(text: &str) -> Id {
        static COMMON: std::sync::LazyLock<std::sync::Mutex<Interner>> =
            std::sync::LazyLock::new(Default::default);
        if text.is_empty() {
            return Id::default();
        }
        let mut common = COMMON.lock().unwrap_or_else(|p| p.into_inner());
        common.id(text)
    }
}

impl std::ops::Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Id {
        Id(Arc::from(s))
    }
}

impl From<String> for Id {
    fn from(s: String) -> Id {
        Id(Arc::from(s))
    }
}

impl From<&String> for Id {
    fn from(s: &String) -> Id {
        Id(Arc::from(s.as_str()))
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Id {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

/// Gives equal ids one shared text. Kept while a graph is built, then
/// dropped: the ids live on in the edges that hold them.
#[derive(Default)]
pub struct Interner(rustc_hash::FxHashSet<Id>);

impl Interner {
    /// The shared id spelt `s`.
    pub fn id(&mut self, s: &str) -> Id {
        if let Some(id) = self.0.get(s) {
            return id.clone();
        }
        let id = Id::from(s);
        self.0.insert(id.clone());
        id
    }

    /// `e` with both ends shared.
    pub fn edge(&mut self, e: super::Edge) -> super::Edge {
        super::Edge {
            src: self.id(&e.src),
            kind: e.kind,
            dst: self.id(&e.dst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_ids_from_an_interner_share_one_text() {
        let mut ids = Interner::default();
        let a = ids.id("src/x.rs:Type::method");
        let b = ids.id(&String::from("src/x.rs:Type::method"));
        let c = ids.id("src/x.rs:Type::other");
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        assert_eq!(a, "src/x.rs:Type::method");
    }

    #[test]
    fn an_id_reads_back_from_postcard_and_json_and_an_empty_one_is_shared() {
        let a = Id::from("src/x.rs:f");
        let bytes = postcard::to_allocvec(&a).unwrap();
        assert_eq!(postcard::from_bytes::<Id>(&bytes).unwrap(), a);
        let escaped: Id = serde_json::from_str(r#""a\"b""#).unwrap();
        assert_eq!(escaped, "a\"b");
        let empty: Id = serde_json::from_str(r#""""#).unwrap();
        assert!(Arc::ptr_eq(&empty.0, &Id::default().0));
    }

    #[test]
    fn an_id_orders_hashes_and_serialises_as_its_text() {
        let (a, b) = (Id::from("a.py:f"), Id::from("a.py:g"));
        assert!(a < b);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"a.py:f\"");
        let back: Id = serde_json::from_str("\"a.py:f\"").unwrap();
        assert_eq!(back, a);
        let set: std::collections::HashSet<Id> = [a.clone()].into();
        assert!(set.contains("a.py:f"));
    }
}
