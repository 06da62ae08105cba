"""The reference-loop command line (thin click skins, loaded lazily)."""
