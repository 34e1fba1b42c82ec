"""A Django API over memora-ogm's synchronous interface, on the app's neomodel connection."""
