// parameters: -
CREATE CONSTRAINT `unique_memora_migration` IF NOT EXISTS FOR (n:`MemoraMigration`) REQUIRE (n.`version`) IS UNIQUE

// ---

// parameters: -
MATCH (memoramigration:MemoraMigration) RETURN memoramigration

// ---

// parameters: count
MATCH (n:`Memory`) WHERE NOT EXISTS { (n)-[:DATE_OBTAINED]->() } RETURN n LIMIT $count

// ---

// parameters: -
DROP INDEX `interaction_updated_timestamp_index` IF EXISTS

// ---

// parameters: create_params
UNWIND $create_params AS create_param
CREATE (n:MemoraMigration)
SET n = create_param
RETURN n
