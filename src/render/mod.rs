//! Answers to text, one file per kind of answer: the locate scaffold
//! (terminal and markdown), the agent tools', `rpg eval`'s tables, and
//! the other commands' reports. Every name and path shown is one line, so
//! a name from the repository cannot forge a line of the answer.

mod eval;
mod report;
mod scaffold;
mod tools;

pub use eval::*;
pub use report::*;
pub use scaffold::*;
pub use tools::*;
