// parameters: -
CREATE CONSTRAINT `unique_org_id` IF NOT EXISTS FOR (n:`Org`) REQUIRE (n.`org_id`) IS UNIQUE

// ---

// parameters: -
CREATE CONSTRAINT `unique_org_user` IF NOT EXISTS FOR (n:`User`) REQUIRE (n.`org_id`, n.`user_id`) IS UNIQUE

// ---

// parameters: -
CREATE CONSTRAINT `unique_org_agent` IF NOT EXISTS FOR (n:`Agent`) REQUIRE (n.`org_id`, n.`agent_id`) IS UNIQUE

// ---

// parameters: -
CREATE CONSTRAINT `unique_user_date` IF NOT EXISTS FOR (n:`Date`) REQUIRE (n.`org_id`, n.`user_id`, n.`date`) IS UNIQUE

// ---

// parameters: -
CREATE CONSTRAINT `unique_user_interaction` IF NOT EXISTS FOR (n:`Interaction`) REQUIRE (n.`org_id`, n.`user_id`, n.`interaction_id`) IS UNIQUE

// ---

// parameters: -
CREATE CONSTRAINT `unique_user_memory` IF NOT EXISTS FOR (n:`Memory`) REQUIRE (n.`org_id`, n.`user_id`, n.`memory_id`) IS UNIQUE
