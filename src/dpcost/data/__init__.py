"""The real data: robust downloads, the California housing archives, and GEO series matrices."""
