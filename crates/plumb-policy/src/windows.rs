//! Sync windows (filled in by the sync-windows work).
