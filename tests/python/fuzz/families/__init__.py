"""One module per op family; each registers its generators on import."""
