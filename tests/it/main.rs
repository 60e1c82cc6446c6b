//! One integration-test binary (one link step) with a module per concern.

mod action;
mod bot;
mod cli;
mod common;
mod embed;
mod encode;
mod eval;
mod evolve;
mod hooks;
mod llm;
mod locate;
mod mcp;
mod tools;
