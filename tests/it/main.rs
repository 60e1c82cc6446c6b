//! One integration-test binary (one link step) with a module per concern.

mod action;
mod bot;
mod cli;
mod common;
mod embed;
mod encode;
mod eval;
mod evolve;
mod history;
mod hooks;
mod hostile;
mod imperfect;
mod languages;
mod llm;
mod locate;
pub mod mcp;
mod tools;
