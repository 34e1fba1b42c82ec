// parameters: -
SHOW CONSTRAINTS YIELD name RETURN name
