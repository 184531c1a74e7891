//! Turns pages into deflate symbol statistics and trains canned tables.
