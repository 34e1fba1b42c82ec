"""The transfer format (JSON lines): records, validation, export pages and imports."""
