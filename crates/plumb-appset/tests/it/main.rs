//! Integration tests of the ApplicationSet controller against the real control plane.

mod controller;
