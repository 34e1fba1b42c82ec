"""Small web applications that use memora-ogm's sync API, tested with their frameworks' clients."""
