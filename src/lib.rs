//! rpg keeps a Repository Planning Graph of a git repository and answers
//! "for this issue, where in the code should I look?".
//!
//! Data flows one way: [`git`] → [`parse`] → [`graph`] (built by [`encode`],
//! with features from [`lift`]) → [`store`].

pub mod config;
pub mod encode;
pub mod git;
pub mod graph;
pub mod lift;
pub mod parse;
pub mod store;
