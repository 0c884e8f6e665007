# Test plumbing lives in tests/conftest.py; this file only marks the repository root.
