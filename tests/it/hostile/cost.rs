//! D. Every input has a cost bound.
