//! AppProject permissions (filled in by the project guard-rails work).
