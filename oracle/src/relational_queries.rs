// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Random queries and statements for the PostgreSQL differential, over the
//! tables of [`crate::relational_tables`]: one SQL text that both engines
//! run and define the same way.
//!
//! The generator writes what users write, not what this fork's other
//! generators write: tables unaliased (the same table at several query
//! levels, hiding the outer one), `USING` and `NATURAL` joins of every
//! type, inside and around subqueries, names left unqualified wherever SQL
//! reads them unambiguously, set operations with and without `ALL`,
//! arrays with `unnest` and `ARRAY(subquery)`, `LATERAL`, rows compared
//! with rows, derived tables whose columns take other items' names or one
//! name twice or a literal, window functions partitioned and ordered by
//! any expression, grouped queries (`GROUPING SETS`, `ROLLUP` and `CUBE`
//! with `grouping()`, `DISTINCT` and `FILTER` aggregates, ordered
//! `string_agg` and `array_agg`, `HAVING` with subqueries, `DISTINCT ON`),
//! recursive queries in `LATERAL` that start from the outer row,
//! `NULLIF`, `GREATEST`, `LEAST`, the simple `CASE`, and integer division
//! and remainder by a `NULLIF(x, 0)`, and `UPDATE ... FROM` / `DELETE ...
//! USING`. It keeps track of
//! the query levels in [`Scope`] to write only names that resolve, and
//! resolve to the same column, in both engines.
//!
//! Left out, because the engines define them differently or the fork does
//! not claim them: integer overflow and division by zero (PostgreSQL
//! raises, and a zero divisor is an error in both: a divisor is always a
//! `NULLIF(x, 0)`); `avg` and other aggregates of PostgreSQL's `numeric`; floats
//! (formatting and `-0.0`); text sorted in a collation other than `C`
//! (the server's cluster uses `C`); `ORDER BY` a list column (PostgreSQL
//! sorts a NULL element last, DataFusion first); scalar subqueries that may
//! return more rows than one (both refuse, with their own words); a
//! `LIMIT` not under an `ORDER BY` of every column; a reference to a
//! name an item has twice (PostgreSQL refuses it; the fork reads the
//! first of two equal columns); a key of a grouping set that is not a
//! column, and an `ORDER BY` right over a grouping set's output
//! (PostgreSQL 15 sorts and filters a constant key, or a key its conditions
//! make equal to another column, as that constant or column, where a set
//! has made it NULL: the fork's answers there are checked by hand in
//! `grouping_sets_keys.slt`); and labels (only values and their
//! classes are compared). A result's own `SELECT` list, which nothing reads
//! by name, has two columns of one name now and then.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::relational_tables::{Kind, SCHEMAS};

/// The families of queries, each generated about as often.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Joins (`USING`, `NATURAL`, `ON`, commas) with names read through
    /// them, filtered, sometimes grouped.
    Joins,
    /// Subqueries in `WHERE` and the `SELECT` list over unaliased tables.
    Subqueries,
    /// `UNION`, `INTERSECT`, `EXCEPT`, with and without `ALL`.
    SetOperations,
    /// Arrays: `ARRAY(subquery)`, `unnest`, `cardinality`, elements.
    Arrays,
    /// `LATERAL` derived tables and `unnest` in `FROM`.
    Lateral,
    /// Rows, written `(a, b)` or `ROW(a, b)`, compared with rows, ordered
    /// by `BETWEEN` two rows, looked for in lists of rows and row
    /// subqueries (`IN`, and every comparison with `ANY` or `ALL`).
    Rows,
    /// Window functions over joins, partitioned and ordered by any names.
    Windows,
    /// Grouped queries: `DISTINCT` and `FILTER` aggregates, ordered string
    /// and array aggregates, `ROLLUP`, `CUBE`, `GROUPING SETS`, `HAVING`,
    /// `DISTINCT ON`.
    Aggregates,
}

pub const FAMILIES: [Family; 8] = [
    Family::Joins,
    Family::Subqueries,
    Family::SetOperations,
    Family::Arrays,
    Family::Lateral,
    Family::Rows,
    Family::Windows,
    Family::Aggregates,
];

/// A query, and whether its `ORDER BY` fixes the order of its rows.
#[derive(Debug, Clone)]
pub struct Query {
    pub family: Family,
    pub sql: String,
    pub ordered: bool,
}

/// A `DELETE` or an `UPDATE`, and the query that finds the rows of the
/// target that the join of an `UPDATE ... FROM` matches more than once
/// (PostgreSQL changes such a row with either match; the fork refuses).
#[derive(Debug, Clone)]
pub struct Statement {
    pub sql: String,
    pub target: &'static str,
    pub repeated_matches: Option<String>,
}

/// A `FROM` item a query level can read: its name and columns.
#[derive(Debug, Clone)]
struct Item {
    name: String,
    columns: Vec<(String, Kind)>,
}

impl Item {
    /// Whether two of the item's columns are called `name`.
    fn repeats(&self, name: &str) -> bool {
        self.columns
            .iter()
            .filter(|(column, _)| column == name)
            .count()
            > 1
    }
}

/// One query level: its `FROM` items, and the keys its `USING` and
/// `NATURAL` joins merged.
#[derive(Debug, Clone, Default)]
struct Level {
    items: Vec<Item>,
    merged: Vec<Merged>,
}

/// A key a `USING` or `NATURAL` join merged: its name and kind, and the
/// items whose columns of that name it merged.
#[derive(Debug, Clone)]
struct Merged {
    name: String,
    kind: Kind,
    items: Vec<String>,
}

impl Level {
    fn has_name(&self, name: &str) -> bool {
        self.items
            .iter()
            .any(|item| item.columns.iter().any(|(column, _)| column == name))
    }

    fn has_item(&self, name: &str) -> bool {
        self.items.iter().any(|item| item.name == name)
    }

    /// The kind of the unqualified `name` where it reads one column (or one
    /// merged key) of this level; `None` where it reads none or several.
    fn unambiguous(&self, name: &str) -> Option<Kind> {
        let merged = self.merged.iter().find(|merged| merged.name == name);
        let mut kinds: Vec<Kind> = self
            .items
            .iter()
            .filter(|item| {
                !merged.is_some_and(|merged| merged.items.contains(&item.name))
            })
            .flat_map(|item| &item.columns)
            .filter(|(column, _)| column == name)
            .map(|(_, kind)| *kind)
            .collect();
        kinds.extend(merged.map(|merged| merged.kind));
        match kinds.as_slice() {
            [kind] => Some(*kind),
            _ => None,
        }
    }

    /// The items whose column `name` the unqualified name reads: those of
    /// its merged key, or the one item with it.
    fn sides_of(&self, name: &str) -> Vec<String> {
        match self.merged.iter().find(|merged| merged.name == name) {
            Some(merged) => merged.items.clone(),
            None => self
                .items
                .iter()
                .filter(|item| item.columns.iter().any(|(column, _)| column == name))
                .map(|item| item.name.clone())
                .collect(),
        }
    }
}

/// The query levels being written, outermost first.
#[derive(Debug, Clone, Default)]
struct Scope {
    levels: Vec<Level>,
}

impl Scope {
    /// Every reference of `kind` the innermost level can make that reads
    /// the same column in both engines.
    fn references(&self, kind: Kind) -> Vec<String> {
        let mut references = vec![];
        let depth = self.levels.len();
        for (index, level) in self.levels.iter().enumerate() {
            let inner = &self.levels[index + 1..depth];
            // Qualified: the item's name is not hidden by an inner level
            for item in &level.items {
                if inner.iter().any(|inner| inner.has_item(&item.name)) {
                    continue;
                }
                // Nor used twice in this level (the generator avoids it);
                // a name the item has twice is ambiguous even qualified
                for (column, column_kind) in &item.columns {
                    if *column_kind == kind && !item.repeats(column) {
                        references.push(format!("{}.{column}", item.name));
                    }
                }
            }
            // Unqualified: no inner level has the name, and this one reads
            // it unambiguously
            let mut names: Vec<&String> = level.merged.iter().map(|m| &m.name).collect();
            for item in &level.items {
                for (column, _) in &item.columns {
                    if !names.contains(&column) {
                        names.push(column);
                    }
                }
            }
            for name in names {
                if level.unambiguous(name) == Some(kind)
                    && !inner.iter().any(|inner| inner.has_name(name))
                {
                    references.push(name.clone());
                }
            }
        }
        references
    }

    /// The references of `kind` to the innermost level's own columns: an
    /// aggregate's argument, which PostgreSQL otherwise computes in the
    /// outer query that owns its columns.
    fn local_references(&self, kind: Kind) -> Vec<String> {
        let Some(innermost) = self.levels.last() else {
            return vec![];
        };
        Scope {
            levels: vec![innermost.clone()],
        }
        .references(kind)
    }

    fn current(&mut self) -> &mut Level {
        self.levels.last_mut().expect("a level is open")
    }
}

/// The generator, from a seed.
pub struct RelationalGenerator {
    rng: StdRng,
    /// Aliases handed out, so that no two items of one level share one.
    next_alias: usize,
    /// Expressions written for the current query: past [`EXPRESSIONS`],
    /// every expression is a leaf, so that queries stay of a user's size.
    expressions: usize,
    /// A first `ORDER BY` key for the query being written: an expression
    /// over a `FROM` column that an output column's name shadows
    /// (`SELECT a AS b FROM t ORDER BY b + 0` sorts by `t.b`).
    shadowed_order_key: Option<String>,
}

/// How many expressions a query has before its expressions stop nesting.
const EXPRESSIONS: usize = 40;

impl RelationalGenerator {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            next_alias: 0,
            expressions: 0,
            shadowed_order_key: None,
        }
    }

    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.rng
    }

    /// A query of a random family.
    pub fn query(&mut self) -> Query {
        let family = FAMILIES[self.rng.random_range(0..FAMILIES.len())];
        self.query_of(family)
    }

    /// A query of `family`.
    pub fn query_of(&mut self, family: Family) -> Query {
        self.next_alias = 0;
        self.expressions = 0;
        self.shadowed_order_key = None;
        let mut scope = Scope::default();
        let (sql, kinds) = match family {
            Family::Joins => self.joins_query(&mut scope),
            Family::Subqueries => self.subquery_query(&mut scope),
            Family::SetOperations => self.set_operation(&mut scope),
            Family::Arrays => self.array_query(&mut scope),
            Family::Lateral => self.lateral_query(&mut scope),
            Family::Rows => self.row_query(&mut scope),
            Family::Windows => self.window_query(&mut scope),
            Family::Aggregates => self.aggregate_query(&mut scope),
        };
        self.finish(family, sql, &kinds)
    }

    /// `sql` ordered by every column that is not a list, sometimes; its
    /// order is then fixed where no list column is left out of it.
    fn finish(&mut self, family: Family, sql: String, kinds: &[Kind]) -> Query {
        if !self.rng.random_bool(0.5) {
            return Query {
                family,
                sql,
                ordered: false,
            };
        }
        let positions: Vec<String> = kinds
            .iter()
            .enumerate()
            .filter(|(_, kind)| **kind != Kind::IntegerList)
            .map(|(index, _)| {
                let direction = if self.rng.random_bool(0.3) {
                    " DESC"
                } else {
                    ""
                };
                format!("{}{direction}", index + 1)
            })
            .collect();
        if positions.is_empty() {
            return Query {
                family,
                sql,
                ordered: false,
            };
        }
        let ordered = positions.len() == kinds.len();
        let keys: Vec<String> = self
            .shadowed_order_key
            .take()
            .into_iter()
            .chain(positions)
            .collect();
        let mut sql = format!("{sql} ORDER BY {}", keys.join(", "));
        if ordered && self.rng.random_bool(0.3) {
            sql.push_str(&format!(" LIMIT {}", self.rng.random_range(1..=4)));
        }
        Query {
            family,
            sql,
            ordered,
        }
    }

    // ---- FROM clauses ----

    /// A table by its bare name or under an alias, as an item of the
    /// current level (whose items all have distinct names).
    fn table(&mut self, scope: &mut Scope) -> String {
        if self.rng.random_bool(0.15) {
            return self.derived_table(scope);
        }
        loop {
            let (name, columns) = SCHEMAS[self.rng.random_range(0..SCHEMAS.len())];
            let alias = if self.rng.random_bool(0.35) {
                self.next_alias += 1;
                Some(format!("x{}", self.next_alias))
            } else {
                None
            };
            let item_name = alias.clone().unwrap_or_else(|| name.to_string());
            if scope.current().has_item(&item_name) {
                continue;
            }
            scope.current().items.push(Item {
                name: item_name,
                columns: columns
                    .iter()
                    .map(|(column, kind)| (column.to_string(), *kind))
                    .collect(),
            });
            return match alias {
                Some(alias) => format!("{name} AS {alias}"),
                None => name.to_string(),
            };
        }
    }

    /// A derived table as an item of the current level, `(SELECT ...) AS
    /// xN`, whose columns users name as they like: bare columns, literals
    /// (constant there, NULL where an outer join pads the item), aliases
    /// that take a table's column names (so that the item hides or merges
    /// with another's), and now and then two columns of one name, which no
    /// reference may then read (PostgreSQL calls it ambiguous). Its body
    /// reads its own table and the query levels around the current one
    /// (not the current level's other items, which would need `LATERAL`),
    /// and is sometimes grouped or `DISTINCT`.
    fn derived_table(&mut self, scope: &mut Scope) -> String {
        let (base, base_columns) = SCHEMAS[self.rng.random_range(0..SCHEMAS.len())];
        self.next_alias += 1;
        let alias = format!("x{}", self.next_alias);
        let mut body_scope = Scope {
            levels: scope.levels[..scope.levels.len() - 1].to_vec(),
        };
        body_scope.levels.push(Level {
            items: vec![Item {
                name: base.to_string(),
                columns: base_columns
                    .iter()
                    .map(|(column, kind)| (column.to_string(), *kind))
                    .collect(),
            }],
            merged: vec![],
        });
        let name_of = |rng: &mut StdRng, column: &str| -> String {
            if rng.random_bool(0.5) {
                column.to_string()
            } else {
                ["k", "v", "w", "s", "c"][rng.random_range(0..5)].to_string()
            }
        };
        let mut columns: Vec<(String, Kind)> = vec![];
        let mut items: Vec<String> = vec![];
        let grouped = self.rng.random_bool(0.25);
        let (column, kind) = base_columns[self.rng.random_range(0..base_columns.len())];
        let name = name_of(&mut self.rng, column);
        items.push(if name == column {
            column.to_string()
        } else {
            format!("{column} AS {name}")
        });
        columns.push((name, kind));
        if grouped {
            let name = name_of(&mut self.rng, "n");
            // Integers, as the tables' columns are: PostgreSQL's count is a
            // bigint, whose sum is a numeric, which the oracle leaves out
            let aggregate = if self.rng.random_bool(0.5) {
                "CAST(count(*) AS INTEGER)".to_string()
            } else {
                let argument = self.local_integer(&mut body_scope);
                let function = ["min", "max"][self.rng.random_range(0..2)];
                format!("{function}({argument})")
            };
            items.push(format!("{aggregate} AS {name}"));
            columns.push((name, Kind::Integer));
        } else {
            for _ in 0..self.rng.random_range(0..=2) {
                if self.rng.random_bool(0.3) {
                    // The same column again, under its own name or another
                    let (column, kind) =
                        base_columns[self.rng.random_range(0..base_columns.len())];
                    let name = name_of(&mut self.rng, column);
                    items.push(format!("{column} AS {name}"));
                    columns.push((name, kind));
                } else if self.rng.random_bool(0.2) {
                    // A literal column: constant in the derived table, but
                    // NULL where an outer join pads the item
                    let name = name_of(&mut self.rng, "e");
                    items.push(format!("{} AS {name}", self.rng.random_range(-1..=3)));
                    columns.push((name, Kind::Integer));
                } else {
                    let kind = if self.rng.random_bool(0.8) {
                        Kind::Integer
                    } else {
                        Kind::Text
                    };
                    let expr = self.expr(&mut body_scope, kind, 1);
                    let name = name_of(&mut self.rng, "e");
                    items.push(format!("{expr} AS {name}"));
                    columns.push((name, kind));
                }
            }
        }
        let distinct = !grouped
            && !columns.iter().any(|(_, kind)| *kind == Kind::IntegerList)
            && self.rng.random_bool(0.2);
        let filter = if self.rng.random_bool(0.4) {
            format!(" WHERE {}", self.predicate(&mut body_scope, 1))
        } else {
            String::new()
        };
        let group_by = if grouped {
            format!(" GROUP BY {}", column)
        } else {
            String::new()
        };
        let sql = format!(
            "(SELECT {}{} FROM {base}{filter}{group_by}) AS {alias}",
            if distinct { "DISTINCT " } else { "" },
            items.join(", ")
        );
        scope.current().items.push(Item {
            name: alias,
            columns,
        });
        sql
    }

    /// A `FROM` clause of one to three items in the current level: commas,
    /// `JOIN ... ON`, `USING` and `NATURAL` joins of every type.
    fn write_from_clause(&mut self, scope: &mut Scope) -> String {
        let mut from = self.table(scope);
        let joins = self.rng.random_range(0..=2);
        for _ in 0..joins {
            let left: Level = scope.current().clone();
            let right = self.table(scope);
            let right_item = scope.current().items.last().cloned().expect("an item");
            let join_type = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]
                [self.rng.random_range(0..4)];
            match self.rng.random_range(0..4) {
                // A comma would end the left side here; CROSS JOIN keeps
                // every item so far on the left of the joins after it
                0 => from = format!("{from} CROSS JOIN {right}"),
                1 => {
                    // USING names both sides read unambiguously
                    let shared = shared_names(&left, &right_item);
                    if shared.is_empty() {
                        from = format!("{from} CROSS JOIN {right}");
                        continue;
                    }
                    let count = self.rng.random_range(1..=shared.len());
                    let names: Vec<(String, Kind)> = shared[..count].to_vec();
                    from = format!(
                        "{from} {join_type} {right} USING ({})",
                        names
                            .iter()
                            .map(|(name, _)| name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    merge(scope.current(), &left, &right_item, &names);
                }
                2 => {
                    // NATURAL joins on every shared name: only where each
                    // one is unambiguous on the left
                    let shared = shared_names(&left, &right_item);
                    let all_shared = right_item
                        .columns
                        .iter()
                        .filter(|(name, _)| left.has_name(name))
                        .count();
                    if shared.is_empty() || shared.len() != all_shared {
                        from = format!("{from} CROSS JOIN {right}");
                        continue;
                    }
                    from = format!("{from} NATURAL {join_type} {right}");
                    merge(scope.current(), &left, &right_item, &shared);
                }
                _ if join_type == "FULL JOIN" => {
                    // PostgreSQL runs a full join only on equalities
                    // (a derived table may have no integer column to name)
                    let left_ref = pick_column(&mut self.rng, &left, Kind::Integer);
                    let right_ref = pick_column(
                        &mut self.rng,
                        &Level {
                            items: vec![right_item.clone()],
                            merged: vec![],
                        },
                        Kind::Integer,
                    );
                    from = match (left_ref, right_ref) {
                        (Some(left_ref), Some(right_ref)) => format!(
                            "{from} FULL JOIN {right} ON {left_ref} = {right_ref}"
                        ),
                        _ => format!("{from} CROSS JOIN {right}"),
                    };
                }
                _ => {
                    let condition = self.predicate(scope, 0);
                    from = format!("{from} {join_type} {right} ON {condition}");
                }
            }
        }
        from
    }

    // ---- expressions ----

    /// An expression of `kind` over the current scope, `depth` levels of
    /// subquery allowed below it.
    fn expr(&mut self, scope: &mut Scope, kind: Kind, depth: usize) -> String {
        match kind {
            Kind::Integer => self.integer(scope, depth),
            Kind::Text => self.text(scope),
            Kind::IntegerList => self.list(scope, depth),
        }
    }

    fn reference(&mut self, scope: &Scope, kind: Kind) -> Option<String> {
        let references = scope.references(kind);
        (!references.is_empty())
            .then(|| references[self.rng.random_range(0..references.len())].clone())
    }

    /// An aggregate's argument: a column of the innermost level, or that
    /// column in a little arithmetic.
    fn local_integer(&mut self, scope: &mut Scope) -> String {
        let references = scope.local_references(Kind::Integer);
        if references.is_empty() {
            return "1".to_string();
        }
        let column = references[self.rng.random_range(0..references.len())].clone();
        if self.rng.random_bool(0.3) {
            format!("({column} + {})", self.integer(scope, 0))
        } else {
            column
        }
    }

    /// Whether the query has room for one more nested expression.
    fn nests(&mut self) -> bool {
        self.expressions += 1;
        self.expressions <= EXPRESSIONS
    }

    fn integer(&mut self, scope: &mut Scope, depth: usize) -> String {
        let literal = |rng: &mut StdRng| rng.random_range(-1..=3).to_string();
        let choice = if self.nests() {
            self.rng.random_range(0..16)
        } else {
            0
        };
        match choice {
            0..=4 => self
                .reference(scope, Kind::Integer)
                .unwrap_or_else(|| literal(&mut self.rng)),
            12 => format!(
                "NULLIF({}, {})",
                self.signed_integer(scope),
                self.signed_integer(scope)
            ),
            13 => {
                let function = ["GREATEST", "LEAST"][self.rng.random_range(0..2)];
                let (left, right) =
                    (self.signed_integer(scope), self.signed_integer(scope));
                format!("{function}({left}, {right})")
            }
            14 => {
                // The simple CASE, its operand compared with each value
                let operand = self.signed_integer(scope);
                let mut arms = String::new();
                for _ in 0..self.rng.random_range(1..=2) {
                    let value = literal(&mut self.rng);
                    arms.push_str(&format!(
                        " WHEN {value} THEN {}",
                        self.signed_integer(scope)
                    ));
                }
                let otherwise = if self.rng.random_bool(0.5) {
                    format!(" ELSE {}", self.signed_integer(scope))
                } else {
                    String::new()
                };
                format!("CASE {operand}{arms}{otherwise} END")
            }
            15 => {
                // Integer division and remainder, never by zero
                let op = ["/", "%"][self.rng.random_range(0..2)];
                let (left, right) =
                    (self.signed_integer(scope), self.signed_integer(scope));
                format!("({left} {op} NULLIF({right}, 0))")
            }
            5 => literal(&mut self.rng),
            6 => {
                let (left, right) = (self.integer(scope, 0), self.integer(scope, 0));
                let op = ["+", "-", "*"][self.rng.random_range(0..3)];
                format!("({left} {op} {right})")
            }
            7 => {
                let (condition, then, otherwise) = (
                    self.predicate(scope, 0),
                    self.integer(scope, 0),
                    self.integer(scope, 0),
                );
                format!("CASE WHEN {condition} THEN {then} ELSE {otherwise} END")
            }
            8 => format!(
                "COALESCE({}, {})",
                self.integer(scope, 0),
                literal(&mut self.rng)
            ),
            9 if depth > 0 => self.scalar_subquery(scope, depth - 1),
            10 => match self.reference(scope, Kind::IntegerList) {
                Some(list) if self.rng.random_bool(0.5) => format!("cardinality({list})"),
                Some(list) => format!("{list}[{}]", self.rng.random_range(1..=3)),
                None => literal(&mut self.rng),
            },
            _ => self
                .reference(scope, Kind::Integer)
                .unwrap_or_else(|| literal(&mut self.rng)),
        }
    }

    /// An integer of a signed type. DataFusion's `cardinality` is unsigned
    /// (PostgreSQL's is an `integer`): mixed with signed integers, it makes
    /// `GREATEST`, `NULLIF` and `/` decimals, and `/` a decimal division.
    fn signed_integer(&mut self, scope: &mut Scope) -> String {
        let integer = self.integer(scope, 0);
        if integer.contains("cardinality(") {
            format!("CAST({integer} AS INT)")
        } else {
            integer
        }
    }

    fn text(&mut self, scope: &mut Scope) -> String {
        let literal = |rng: &mut StdRng| {
            format!("'{}'", ["a", "b", "c", "d"][rng.random_range(0..4)])
        };
        let choice = if self.nests() {
            self.rng.random_range(0..6)
        } else {
            0
        };
        match choice {
            0..=2 => self
                .reference(scope, Kind::Text)
                .unwrap_or_else(|| literal(&mut self.rng)),
            3 => literal(&mut self.rng),
            4 => format!("({} || {})", self.text(scope), literal(&mut self.rng)),
            _ => format!("upper({})", self.text(scope)),
        }
    }

    fn list(&mut self, scope: &mut Scope, depth: usize) -> String {
        let choice = if self.nests() {
            self.rng.random_range(0..4)
        } else {
            0
        };
        match choice {
            0 | 1 => match self.reference(scope, Kind::IntegerList) {
                Some(list) => list,
                None => format!("ARRAY[{}]", self.signed_integer(scope)),
            },
            2 => format!(
                "ARRAY[{}, {}]",
                self.signed_integer(scope),
                self.signed_integer(scope)
            ),
            _ if depth > 0 => self.array_subquery(scope),
            _ => format!("ARRAY[{}]", self.signed_integer(scope)),
        }
    }

    /// A predicate over the current scope.
    fn predicate(&mut self, scope: &mut Scope, depth: usize) -> String {
        let choice = if self.nests() {
            self.rng.random_range(0..14)
        } else {
            13
        };
        match choice {
            0..=3 => {
                let kind = if self.rng.random_bool(0.8) {
                    Kind::Integer
                } else {
                    Kind::Text
                };
                let op = ["=", "<>", "<", "<=", ">", ">="][self.rng.random_range(0..6)];
                let (left, right) =
                    (self.expr(scope, kind, depth), self.expr(scope, kind, 0));
                format!("{left} {op} {right}")
            }
            4 => {
                let kind = [Kind::Integer, Kind::Text, Kind::IntegerList]
                    [self.rng.random_range(0..3)];
                let not = if self.rng.random_bool(0.5) {
                    " NOT"
                } else {
                    ""
                };
                format!("{} IS{not} NULL", self.expr(scope, kind, 0))
            }
            5 => format!(
                "({} AND {})",
                self.predicate(scope, depth),
                self.predicate(scope, 0)
            ),
            6 => format!(
                "({} OR {})",
                self.predicate(scope, depth),
                self.predicate(scope, 0)
            ),
            7 => format!("NOT ({})", self.predicate(scope, depth)),
            8 => {
                let not = if self.rng.random_bool(0.4) {
                    " NOT"
                } else {
                    ""
                };
                let list = (0..self.rng.random_range(1..=3))
                    .map(|_| self.integer(scope, 0))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("{}{not} IN ({list})", self.integer(scope, 0))
            }
            9 => format!(
                "{} BETWEEN {} AND {}",
                self.integer(scope, 0),
                self.integer(scope, 0),
                self.integer(scope, 0)
            ),
            10 | 11 if depth > 0 => self.subquery_predicate(scope, depth - 1),
            12 => self.row_predicate(scope, depth),
            _ => {
                let (left, right) = (self.integer(scope, 0), self.integer(scope, 0));
                format!("{left} = {right}")
            }
        }
    }

    // ---- subqueries ----

    /// Opens a level for a subquery, writes its `FROM`, calls `body`, and
    /// closes it.
    fn in_subquery<T>(
        &mut self,
        scope: &mut Scope,
        body: impl FnOnce(&mut Self, &mut Scope, String) -> T,
    ) -> T {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let result = body(self, scope, from);
        scope.levels.pop();
        result
    }

    /// `[WHERE p]` over the current level.
    fn where_clause(&mut self, scope: &mut Scope, depth: usize) -> String {
        if self.rng.random_bool(0.7) {
            format!(" WHERE {}", self.predicate(scope, depth))
        } else {
            String::new()
        }
    }

    /// A scalar subquery of one aggregated integer.
    fn scalar_subquery(&mut self, scope: &mut Scope, depth: usize) -> String {
        self.in_subquery(scope, |this, scope, from| {
            let filter = this.where_clause(scope, depth);
            let aggregate = match this.rng.random_range(0..4) {
                0 => "count(*)".to_string(),
                1 => format!("count({})", this.local_integer(scope)),
                2 => format!("max({})", this.local_integer(scope)),
                _ => format!("sum({})", this.local_integer(scope)),
            };
            format!("(SELECT {aggregate} FROM {from}{filter})")
        })
    }

    /// `ARRAY(SELECT x FROM ... ORDER BY x)`.
    fn array_subquery(&mut self, scope: &mut Scope) -> String {
        self.in_subquery(scope, |this, scope, from| {
            let filter = this.where_clause(scope, 0);
            let value = this.integer(scope, 0);
            format!("ARRAY(SELECT {value} AS e FROM {from}{filter} ORDER BY 1)")
        })
    }

    /// `EXISTS`, `IN`, `NOT IN` or a comparison with a subquery.
    fn subquery_predicate(&mut self, scope: &mut Scope, depth: usize) -> String {
        match self.rng.random_range(0..4) {
            0 => {
                let not = if self.rng.random_bool(0.4) {
                    "NOT "
                } else {
                    ""
                };
                self.in_subquery(scope, |this, scope, from| {
                    let filter = this.where_clause(scope, depth);
                    format!("{not}EXISTS (SELECT 1 FROM {from}{filter})")
                })
            }
            1 | 2 => {
                let kind = if self.rng.random_bool(0.8) {
                    Kind::Integer
                } else {
                    Kind::Text
                };
                let left = self.expr(scope, kind, 0);
                let not = if self.rng.random_bool(0.4) {
                    " NOT"
                } else {
                    ""
                };
                self.in_subquery(scope, |this, scope, from| {
                    let filter = this.where_clause(scope, depth);
                    let value = this.expr(scope, kind, 0);
                    format!("{left}{not} IN (SELECT {value} FROM {from}{filter})")
                })
            }
            _ => {
                let left = self.integer(scope, 0);
                let op = ["=", "<", ">="][self.rng.random_range(0..3)];
                let subquery = self.scalar_subquery(scope, depth);
                format!("{left} {op} {subquery}")
            }
        }
    }

    /// A row compared with a row, a list of rows or a row subquery (`IN`,
    /// or any comparison with `ANY` or `ALL`); a row written `(a, b)` or
    /// `ROW(a, b)`.
    fn row_predicate(&mut self, scope: &mut Scope, depth: usize) -> String {
        let row = |this: &mut Self, scope: &mut Scope| {
            let keyword = if this.rng.random_bool(0.25) {
                "ROW"
            } else {
                ""
            };
            let (a, b) = (this.integer(scope, 0), this.integer(scope, 0));
            format!("{keyword}({a}, {b})")
        };
        let left = row(self, scope);
        let branches = if depth > 0 { 5 } else { 2 };
        match self.rng.random_range(0..branches) {
            0 if self.rng.random_bool(0.25) => {
                let not = if self.rng.random_bool(0.4) {
                    " NOT"
                } else {
                    ""
                };
                let (low, high) = (row(self, scope), row(self, scope));
                format!("{left}{not} BETWEEN {low} AND {high}")
            }
            0 => {
                let op = ["=", "<>", "<", "<=", ">", ">="][self.rng.random_range(0..6)];
                let right = row(self, scope);
                format!("{left} {op} {right}")
            }
            1 => {
                let not = if self.rng.random_bool(0.4) {
                    " NOT"
                } else {
                    ""
                };
                let rows = (0..self.rng.random_range(1..=3))
                    .map(|_| row(self, scope))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("{left}{not} IN ({rows})")
            }
            3 => {
                // A row subquery of one row: an aggregate without GROUP BY
                let op = ["=", "<>", "<", "<=", ">", ">="][self.rng.random_range(0..6)];
                self.in_subquery(scope, |this, scope, from| {
                    let filter = this.where_clause(scope, depth.saturating_sub(1));
                    // Of the subquery's own columns: an aggregate of outer
                    // columns alone is the outer query's
                    let (a, b) = (this.local_integer(scope), this.local_integer(scope));
                    format!("{left} {op} (SELECT min({a}), max({b}) FROM {from}{filter})")
                })
            }
            2 => {
                let not = if self.rng.random_bool(0.4) {
                    " NOT"
                } else {
                    ""
                };
                self.in_subquery(scope, |this, scope, from| {
                    let filter = this.where_clause(scope, depth.saturating_sub(1));
                    let (a, b) = (this.integer(scope, 0), this.integer(scope, 0));
                    let list = select_list(&[a, b]);
                    format!("{left}{not} IN (SELECT {list} FROM {from}{filter})")
                })
            }
            _ => {
                let op = ["=", "<>", "<", "<=", ">", ">="][self.rng.random_range(0..6)];
                let quantifier = if self.rng.random_bool(0.5) {
                    "ANY"
                } else {
                    "ALL"
                };
                self.in_subquery(scope, |this, scope, from| {
                    let filter = this.where_clause(scope, depth.saturating_sub(1));
                    let (a, b) = (this.integer(scope, 0), this.integer(scope, 0));
                    let list = select_list(&[a, b]);
                    format!(
                        "{left} {op} {quantifier} (SELECT {list} FROM {from}{filter})"
                    )
                })
            }
        }
    }

    // ---- queries of each family ----

    /// `SELECT` of 1 to 3 expressions (of random kinds) over a new level.
    fn select(&mut self, scope: &mut Scope, depth: usize) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, depth);
        let count = self.rng.random_range(1..=3);
        let mut kinds = vec![];
        let mut exprs = vec![];
        for _ in 0..count {
            let kind = [Kind::Integer, Kind::Integer, Kind::Text, Kind::IntegerList]
                [self.rng.random_range(0..4)];
            exprs.push(self.expr(scope, kind, depth));
            kinds.push(kind);
        }
        scope.levels.pop();
        let distinct = if self.rng.random_bool(0.15) {
            "DISTINCT "
        } else {
            ""
        };
        let list = self.output_list(&mut exprs, &mut kinds, true);
        (
            format!("SELECT {distinct}{list} FROM {from}{filter}"),
            kinds,
        )
    }

    fn joins_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, 1);
        let result = if self.rng.random_bool(0.25) {
            // SELECT * shows each merged key once, in SQL's order; where a
            // list is among its columns its place is not worth predicting,
            // and the rows are compared unordered
            let mut kinds = star_kinds(scope.current());
            if kinds.contains(&Kind::IntegerList) {
                kinds = vec![Kind::IntegerList; kinds.len()];
            }
            (format!("SELECT * FROM {from}{filter}"), kinds)
        } else if self.rng.random_bool(0.35) {
            // Grouped by a name read through the joins
            let key = self
                .reference(scope, Kind::Integer)
                .unwrap_or_else(|| "1 + 0".to_string());
            let text = scope.local_references(Kind::Text);
            let (aggregate, kind) = match self.rng.random_range(0..3) {
                0 => ("count(*)".to_string(), Kind::Integer),
                2 if !text.is_empty() => (
                    format!("min({})", text[self.rng.random_range(0..text.len())]),
                    Kind::Text,
                ),
                _ => (format!("sum({})", self.local_integer(scope)), Kind::Integer),
            };
            let having = if self.rng.random_bool(0.3) {
                format!(" HAVING count(*) > {}", self.rng.random_range(0..=2))
            } else {
                String::new()
            };
            (
                format!(
                    "SELECT {key} AS c1, {aggregate} AS c2 FROM {from}{filter} \
                     GROUP BY {key}{having}"
                ),
                vec![Kind::Integer, kind],
            )
        } else {
            let count = self.rng.random_range(1..=3);
            let mut kinds = vec![];
            let mut exprs = vec![];
            for _ in 0..count {
                let kind = [Kind::Integer, Kind::Integer, Kind::Text]
                    [self.rng.random_range(0..3)];
                exprs.push(self.expr(scope, kind, 1));
                kinds.push(kind);
            }
            let list = match self.shadowing_name(scope.current()) {
                Some(name) => self.shadowing_list(&exprs, &name),
                None => self.output_list(&mut exprs, &mut kinds, true),
            };
            (format!("SELECT {list} FROM {from}{filter}"), kinds)
        };
        scope.levels.pop();
        result
    }

    /// Window functions whose values do not rest on how the rows of equal
    /// `ORDER BY` keys are ordered: ranks, and counts, sums, minimums and
    /// maximums over the default frame, which takes such rows together.
    /// Their keys are any expressions of the joins, subqueries and columns
    /// that outer joins pad with NULLs included.
    fn window_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, 1);
        let mut exprs = vec![];
        let mut kinds = vec![];
        for _ in 0..self.rng.random_range(0..=2) {
            let kind = [Kind::Integer, Kind::Text][self.rng.random_range(0..2)];
            exprs.push(self.expr(scope, kind, 0));
            kinds.push(kind);
        }
        for _ in 0..self.rng.random_range(1..=2) {
            let (function, kind) = self.window_function(scope);
            let partition = if self.rng.random_bool(0.6) {
                format!("PARTITION BY {}", self.window_key(scope))
            } else {
                String::new()
            };
            let order: Vec<String> = (0..self.rng.random_range(0..=2))
                .map(|_| {
                    let key = self.window_key(scope);
                    let direction = ["", " DESC", " NULLS FIRST", " DESC NULLS LAST"]
                        [self.rng.random_range(0..4)];
                    format!("{key}{direction}")
                })
                .collect();
            let order = if order.is_empty() {
                String::new()
            } else {
                let space = if partition.is_empty() { "" } else { " " };
                format!("{space}ORDER BY {}", order.join(", "))
            };
            exprs.push(format!("{function} OVER ({partition}{order})"));
            kinds.push(kind);
        }
        scope.levels.pop();
        let list = self.output_list(&mut exprs, &mut kinds, true);
        (format!("SELECT {list} FROM {from}{filter}"), kinds)
    }

    /// A window function of the current level and the kind of its values.
    fn window_function(&mut self, scope: &mut Scope) -> (String, Kind) {
        match self.rng.random_range(0..6) {
            0 => ("rank()".to_string(), Kind::Integer),
            1 => ("dense_rank()".to_string(), Kind::Integer),
            2 => ("count(*)".to_string(), Kind::Integer),
            3 => (format!("sum({})", self.local_integer(scope)), Kind::Integer),
            4 => (format!("max({})", self.local_integer(scope)), Kind::Integer),
            _ => match scope.local_references(Kind::Text) {
                text if !text.is_empty() => (
                    format!("min({})", text[self.rng.random_range(0..text.len())]),
                    Kind::Text,
                ),
                _ => (
                    format!("count({})", self.local_integer(scope)),
                    Kind::Integer,
                ),
            },
        }
    }

    /// A window's `PARTITION BY` or `ORDER BY` key: an integer or text
    /// expression, a subquery now and then.
    fn window_key(&mut self, scope: &mut Scope) -> String {
        if self.rng.random_bool(0.8) {
            self.integer(scope, 1)
        } else {
            self.text(scope)
        }
    }

    /// A grouped query as users write them: keys that are expressions of
    /// the joins (columns an outer join pads with NULLs among them), plain
    /// or under `ROLLUP`, `CUBE` or `GROUPING SETS` with `grouping()`;
    /// `DISTINCT`, `FILTER`, and ordered string and array aggregates;
    /// `HAVING` over aggregates, keys and subqueries that read a key. Or a
    /// `DISTINCT ON` whose `ORDER BY` fixes which row each key keeps.
    fn aggregate_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, 1);
        let result = if self.rng.random_bool(0.15) {
            self.distinct_on(scope, &from, &filter)
        } else {
            self.grouped(scope, &from, &filter)
        };
        scope.levels.pop();
        result
    }

    fn grouped(
        &mut self,
        scope: &mut Scope,
        from: &str,
        filter: &str,
    ) -> (String, Vec<Kind>) {
        let grouping = self.rng.random_range(0..6);
        // PostgreSQL 15 takes a constant key of a grouping set for a constant
        // (in ORDER BY and HAVING) where a set makes it NULL: there, keys are
        // columns
        let keys: Vec<(String, Kind)> = (0..self.rng.random_range(1..=2))
            .map(|_| self.grouping_key(scope, grouping <= 2))
            .collect();
        let columns = [
            scope.references(Kind::Integer),
            scope.references(Kind::Text),
        ]
        .concat();
        let grouping = if keys.iter().all(|(key, _)| columns.contains(key)) {
            grouping
        } else {
            0
        };
        let key_list = keys
            .iter()
            .map(|(key, _)| key.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let (group_by, sets) = match grouping {
            0..=2 => (key_list.clone(), false),
            3 => (format!("ROLLUP ({key_list})"), true),
            4 => (format!("CUBE ({key_list})"), true),
            _ => {
                let sets: Vec<String> =
                    keys.iter().map(|(key, _)| format!("({key})")).collect();
                (format!("GROUPING SETS ({}, ())", sets.join(", ")), true)
            }
        };
        let mut exprs: Vec<String> = keys.iter().map(|(key, _)| key.clone()).collect();
        let mut kinds: Vec<Kind> = keys.iter().map(|(_, kind)| *kind).collect();
        for _ in 0..self.rng.random_range(1..=2) {
            let (aggregate, kind) = self.aggregate(scope);
            exprs.push(aggregate);
            kinds.push(kind);
        }
        if sets && self.rng.random_bool(0.5) {
            exprs.push(format!("grouping({key_list})"));
            kinds.push(Kind::Integer);
        }
        let having = if self.rng.random_bool(0.35) {
            format!(" HAVING {}", self.having(scope, &keys))
        } else {
            String::new()
        };
        let list = self.output_list(&mut exprs, &mut kinds, true);
        let sql =
            format!("SELECT {list} FROM {from}{filter} GROUP BY {group_by}{having}");
        if sets {
            // PostgreSQL 15 orders a key of a grouping set as the column it
            // groups (a constant, or equal to another by the query's
            // conditions), not as the NULL a set makes it: the query's own
            // ORDER BY goes outside it
            (format!("SELECT * FROM ({sql}) AS g"), kinds)
        } else {
            (sql, kinds)
        }
    }

    /// A grouping key: a column most often, or, where `expressions`, an
    /// expression.
    fn grouping_key(&mut self, scope: &mut Scope, expressions: bool) -> (String, Kind) {
        let kind = if self.rng.random_bool(0.75) {
            Kind::Integer
        } else {
            Kind::Text
        };
        if let Some(column) = self.reference(scope, kind)
            && (!expressions || self.rng.random_bool(0.7))
        {
            return (column, kind);
        }
        if !expressions {
            let other = if kind == Kind::Integer {
                Kind::Text
            } else {
                Kind::Integer
            };
            if let Some(column) = self.reference(scope, other) {
                return (column, other);
            }
        }
        (self.expr_not_literal(scope, kind), kind)
    }

    /// An expression of `kind` that is not a bare literal, which PostgreSQL
    /// refuses (text) or reads as a position in the SELECT list (integer)
    /// in `GROUP BY` and `ORDER BY`.
    fn expr_not_literal(&mut self, scope: &mut Scope, kind: Kind) -> String {
        let expr = self.expr(scope, kind, 0);
        if expr.parse::<i64>().is_ok() {
            format!("({expr} + 0)")
        } else if expr.starts_with('\'') {
            format!("({expr} || '')")
        } else {
            expr
        }
    }

    /// An aggregate of the current level and the kind of its values,
    /// `FILTER`ed now and then.
    fn aggregate(&mut self, scope: &mut Scope) -> (String, Kind) {
        let text = scope.local_references(Kind::Text);
        let (aggregate, kind) = match self.rng.random_range(0..10) {
            0 => ("count(*)".to_string(), Kind::Integer),
            1 => (
                format!("count(DISTINCT {})", self.local_integer(scope)),
                Kind::Integer,
            ),
            2 => (format!("sum({})", self.local_integer(scope)), Kind::Integer),
            3 => (
                format!("sum(DISTINCT {})", self.local_integer(scope)),
                Kind::Integer,
            ),
            4 => {
                let function = ["min", "max"][self.rng.random_range(0..2)];
                (
                    format!("{function}({})", self.local_integer(scope)),
                    Kind::Integer,
                )
            }
            5 if !text.is_empty() => {
                let column = &text[self.rng.random_range(0..text.len())];
                let direction = ["", " DESC"][self.rng.random_range(0..2)];
                (
                    format!("string_agg({column}, ',' ORDER BY {column}{direction})"),
                    Kind::Text,
                )
            }
            6 => {
                // Ordered by the value itself, so that ties are equal
                let value = self.local_integer(scope);
                (
                    format!("array_agg({value} ORDER BY {value})"),
                    Kind::IntegerList,
                )
            }
            7 => {
                let function = ["bool_and", "bool_or"][self.rng.random_range(0..2)];
                // (A boolean column sorts as an integer would)
                (
                    format!("{function}({})", self.predicate(scope, 0)),
                    Kind::Integer,
                )
            }
            8 if !text.is_empty() => {
                let function = ["min", "max"][self.rng.random_range(0..2)];
                let column = &text[self.rng.random_range(0..text.len())];
                (format!("{function}({column})"), Kind::Text)
            }
            _ => (
                format!("count({})", self.local_integer(scope)),
                Kind::Integer,
            ),
        };
        if self.rng.random_bool(0.2) {
            let condition = self.predicate(scope, 0);
            (format!("{aggregate} FILTER (WHERE {condition})"), kind)
        } else {
            (aggregate, kind)
        }
    }

    /// A `HAVING` condition over aggregates and `keys`.
    fn having(&mut self, scope: &mut Scope, keys: &[(String, Kind)]) -> String {
        let bound = self.rng.random_range(0..=2);
        match self.rng.random_range(0..4) {
            0 => format!("count(*) > {bound}"),
            1 => {
                let function = ["sum", "min", "max"][self.rng.random_range(0..3)];
                let argument = self.local_integer(scope);
                let op = ["=", "<>", "<", ">="][self.rng.random_range(0..4)];
                format!("{function}({argument}) {op} {bound}")
            }
            2 => {
                let (key, _) = &keys[self.rng.random_range(0..keys.len())];
                format!("{key} IS NOT NULL")
            }
            _ => {
                // A subquery reading a key column. Its FROM reads no outer
                // column (PostgreSQL requires those to be grouped), and its
                // own names must not hide the key
                let mut inner = Scope::default();
                inner.levels.push(Level::default());
                let inner_from = self.write_from_clause(&mut inner);
                let inner_level = inner.levels.pop().expect("the level opened above");
                let both = Scope {
                    levels: vec![scope.current().clone(), inner_level.clone()],
                };
                let visible = both.references(Kind::Integer);
                let keys: Vec<&String> = keys
                    .iter()
                    .filter(|(key, kind)| *kind == Kind::Integer && visible.contains(key))
                    .map(|(key, _)| key)
                    .collect();
                let columns = Scope {
                    levels: vec![inner_level],
                }
                .references(Kind::Integer);
                if keys.is_empty() || columns.is_empty() {
                    return format!("count(*) > {bound}");
                }
                let key = keys[self.rng.random_range(0..keys.len())];
                let column = &columns[self.rng.random_range(0..columns.len())];
                let not = ["", "NOT "][self.rng.random_range(0..2)];
                format!("{not}EXISTS (SELECT 1 FROM {inner_from} WHERE {column} = {key})")
            }
        }
    }

    /// `SELECT DISTINCT ON (key) key, value ... ORDER BY key, value`, as a
    /// derived table (the query's own `ORDER BY` may follow): the order
    /// fixes the value each key keeps, as rows of equal keys and values
    /// are equal.
    fn distinct_on(
        &mut self,
        scope: &mut Scope,
        from: &str,
        filter: &str,
    ) -> (String, Vec<Kind>) {
        let (key, key_kind) = self.grouping_key(scope, true);
        let kind = [Kind::Integer, Kind::Text][self.rng.random_range(0..2)];
        let value = self.expr_not_literal(scope, kind);
        let direction = ["", " DESC", " DESC NULLS LAST", " NULLS FIRST"]
            [self.rng.random_range(0..4)];
        (
            format!(
                "SELECT * FROM (SELECT DISTINCT ON ({key}) {key} AS c1, {value} AS c2 \
                 FROM {from}{filter} ORDER BY {key}, {value}{direction}) AS d"
            ),
            vec![key_kind, kind],
        )
    }

    fn subquery_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = format!(" WHERE {}", self.subquery_predicate(scope, 1));
        let mut exprs = vec![self.expr(scope, Kind::Integer, 0)];
        let mut kinds = vec![Kind::Integer];
        if self.rng.random_bool(0.5) {
            exprs.push(self.scalar_subquery(scope, 1));
            kinds.push(Kind::Integer);
        }
        scope.levels.pop();
        let list = self.output_list(&mut exprs, &mut kinds, true);
        (format!("SELECT {list} FROM {from}{filter}"), kinds)
    }

    fn set_operation(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        let (left, kinds) = self.select(scope, 1);
        // The right side of the same kinds
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, 1);
        let mut exprs: Vec<String> = kinds
            .iter()
            .map(|kind| self.expr(scope, *kind, 0))
            .collect();
        scope.levels.pop();
        let list = self.output_list(&mut exprs, &mut kinds.clone(), false);
        let right = format!("SELECT {list} FROM {from}{filter}");
        let op = ["UNION", "INTERSECT", "EXCEPT"][self.rng.random_range(0..3)];
        let all = if self.rng.random_bool(0.6) {
            " ALL"
        } else {
            ""
        };
        // List columns compare by value in DISTINCT and set operations
        (format!("{left} {op}{all} {right}"), kinds)
    }

    fn array_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let filter = self.where_clause(scope, 1);
        let mut exprs = vec![];
        let mut kinds = vec![];
        for _ in 0..self.rng.random_range(1..=2) {
            match self.rng.random_range(0..3) {
                0 => {
                    exprs.push(self.array_subquery(scope));
                    kinds.push(Kind::IntegerList);
                }
                1 => {
                    // An aggregate of a list's elements, correlated
                    let list = self.list(scope, 0);
                    let aggregate = ["sum(u)", "count(u)", "max(u)", "count(*)"]
                        [self.rng.random_range(0..4)];
                    exprs.push(format!(
                        "(SELECT {aggregate} FROM unnest({list}) AS x(u))"
                    ));
                    kinds.push(Kind::Integer);
                }
                _ => {
                    exprs.push(self.expr(scope, Kind::Integer, 0));
                    kinds.push(Kind::Integer);
                }
            }
        }
        scope.levels.pop();
        let list = self.output_list(&mut exprs, &mut kinds, true);
        (format!("SELECT {list} FROM {from}{filter}"), kinds)
    }

    fn lateral_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        self.next_alias += 1;
        let alias = format!("l{}", self.next_alias);
        let (item, columns) = if self.rng.random_bool(0.4) {
            // unnest of a list the FROM items to its left hold
            let list = self.list(scope, 0);
            (
                format!("unnest({list}) AS {alias}(u)"),
                vec![("u".to_string(), Kind::Integer)],
            )
        } else if self.rng.random_bool(0.3) {
            (
                format!("LATERAL ({}) AS {alias}", self.recursive_query(scope)),
                vec![("u".to_string(), Kind::Integer)],
            )
        } else {
            let body = self.in_subquery(scope, |this, scope, inner_from| {
                let filter = this.where_clause(scope, 0);
                let aggregate = if this.rng.random_bool(0.5) {
                    "count(*)".to_string()
                } else {
                    format!("max({})", this.local_integer(scope))
                };
                format!("SELECT {aggregate} AS u FROM {inner_from}{filter}")
            });
            (
                format!("LATERAL ({body}) AS {alias}"),
                vec![("u".to_string(), Kind::Integer)],
            )
        };
        let joined = if self.rng.random_bool(0.5) {
            format!("{from}, {item}")
        } else {
            format!("{from} LEFT JOIN {item} ON true")
        };
        scope.current().items.push(Item {
            name: alias.clone(),
            columns,
        });
        let filter = self.where_clause(scope, 0);
        let other = self.integer(scope, 0);
        scope.levels.pop();
        (
            format!("SELECT {alias}.u AS c1, {other} AS c2 FROM {joined}{filter}"),
            vec![Kind::Integer, Kind::Integer],
        )
    }

    /// A recursive query of one integer column `u` that starts from, or
    /// is bounded by, the row of the FROM items to its left. The recursion
    /// stops after three steps; the terms never nest a subquery reading
    /// the work table, which neither engine allows.
    fn recursive_query(&mut self, scope: &mut Scope) -> String {
        // Expressions of the outer row, written before `r` is in scope
        let start = self.integer(scope, 0);
        let bound = self.integer(scope, 0);
        let union = ["UNION", "UNION ALL"][self.rng.random_range(0..2)];
        let step = match self.rng.random_range(0..3) {
            0 => format!("SELECT u + 1, d + 1 FROM r WHERE d < 3 AND u < {bound}"),
            1 => {
                // A step through a table: the next values of a key
                let (table, columns) = SCHEMAS[self.rng.random_range(0..2)];
                let integers: Vec<&str> = columns
                    .iter()
                    .filter(|(_, kind)| *kind == Kind::Integer)
                    .map(|(name, _)| *name)
                    .collect();
                let from = integers[self.rng.random_range(0..integers.len())];
                let to = integers[self.rng.random_range(0..integers.len())];
                format!(
                    "SELECT {table}.{to}, r.d + 1 FROM r JOIN {table} \
                     ON {table}.{from} = r.u WHERE r.d < 3"
                )
            }
            _ => format!(
                "SELECT u - 1, d + 1 FROM r WHERE d < 3 AND u IS DISTINCT FROM {bound}"
            ),
        };
        let body = [
            "SELECT u FROM r",
            "SELECT max(u) AS u FROM r",
            "SELECT count(*) AS u FROM r",
        ][self.rng.random_range(0..3)];
        format!(
            "WITH RECURSIVE r(u, d) AS (SELECT CAST({start} AS INT), 0 {union} {step}) {body}"
        )
    }

    fn row_query(&mut self, scope: &mut Scope) -> (String, Vec<Kind>) {
        scope.levels.push(Level::default());
        let from = self.write_from_clause(scope);
        let predicate = self.row_predicate(scope, 1);
        let wrap = ["", "NOT ", ""][self.rng.random_range(0..3)];
        let value = self.integer(scope, 0);
        let result = if self.rng.random_bool(0.5) {
            (
                format!("SELECT {value} AS c1 FROM {from} WHERE {wrap}({predicate})"),
                vec![Kind::Integer],
            )
        } else {
            (
                format!("SELECT {value} AS c1, {wrap}({predicate}) AS c2 FROM {from}"),
                vec![Kind::Integer, Kind::Integer],
            )
        };
        scope.levels.pop();
        // (A boolean column sorts as an integer would: only lists matter)
        result
    }

    // ---- DML ----

    /// A `DELETE` or an `UPDATE`, with a `USING` or `FROM` half the time.
    pub fn statement(&mut self) -> Statement {
        self.next_alias = 0;
        self.expressions = 0;
        let (target, columns) = SCHEMAS[self.rng.random_range(0..SCHEMAS.len())];
        let mut scope = Scope::default();
        scope.levels.push(Level::default());
        scope.current().items.push(Item {
            name: target.to_string(),
            columns: columns
                .iter()
                .map(|(column, kind)| (column.to_string(), *kind))
                .collect(),
        });
        let with_from = self.rng.random_bool(0.5);
        let from = if with_from {
            let item = self.table(&mut scope);
            Some(item)
        } else {
            None
        };
        let predicate = self.predicate(&mut scope, 1);
        if self.rng.random_bool(0.5) {
            let sql = match &from {
                Some(from) => {
                    format!("DELETE FROM {target} USING {from} WHERE {predicate}")
                }
                None => format!("DELETE FROM {target} WHERE {predicate}"),
            };
            return Statement {
                sql,
                target,
                repeated_matches: None,
            };
        }
        // SET one integer column of the target (never a list)
        let assignable: Vec<&str> = columns
            .iter()
            .filter(|(_, kind)| *kind == Kind::Integer)
            .map(|(name, _)| *name)
            .collect();
        let column = assignable[self.rng.random_range(0..assignable.len())];
        let value = self.integer(&mut scope, 1);
        match from {
            Some(from) => Statement {
                sql: format!(
                    "UPDATE {target} SET {column} = {value} FROM {from} WHERE {predicate}"
                ),
                target,
                repeated_matches: Some(format!(
                    "SELECT count(*) FROM (SELECT {target}.ctid FROM {target}, {from} \
                     WHERE {predicate} GROUP BY {target}.ctid HAVING count(*) > 1) AS r"
                )),
            },
            None => Statement {
                sql: format!("UPDATE {target} SET {column} = {value} WHERE {predicate}"),
                target,
                repeated_matches: None,
            },
        }
    }
}

impl RelationalGenerator {
    /// Sometimes, an integer column's bare name that reads one column of
    /// `level`, for an output column to shadow.
    fn shadowing_name(&mut self, level: &Level) -> Option<String> {
        if !self.rng.random_bool(0.2) {
            return None;
        }
        let mut names: Vec<&String> = level
            .items
            .iter()
            .flat_map(|item| &item.columns)
            .filter(|(name, _)| level.unambiguous(name) == Some(Kind::Integer))
            .map(|(name, _)| name)
            .collect();
        names.dedup();
        if names.is_empty() {
            return None;
        }
        Some(names[self.rng.random_range(0..names.len())].clone())
    }

    /// The `SELECT` list of `exprs` with the first under `name`, a column
    /// name of the `FROM` clause, and an `ORDER BY` key that reads that
    /// column inside an expression, as SQL reads it there.
    fn shadowing_list(&mut self, exprs: &[String], name: &str) -> String {
        let key = match self.rng.random_range(0..4) {
            0 => format!("{name} + 0"),
            1 => format!("-{name}"),
            2 => format!("coalesce({name}, 0)"),
            _ => format!("{name} IS NULL"),
        };
        let direction = if self.rng.random_bool(0.3) {
            " DESC"
        } else {
            ""
        };
        self.shadowed_order_key = Some(format!("{key}{direction}"));
        exprs
            .iter()
            .enumerate()
            .map(|(index, expr)| match index {
                0 => format!("{expr} AS {name}"),
                _ => format!("{expr} AS c{}", index + 1),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The names `right` shares with `left` that a `USING` can name: read
/// unambiguously on the left (or merged there), of one kind on both sides.
fn shared_names(left: &Level, right: &Item) -> Vec<(String, Kind)> {
    right
        .columns
        .iter()
        .filter(|(name, kind)| {
            left.unambiguous(name) == Some(*kind) && !right.repeats(name)
        })
        .cloned()
        .collect()
}

impl RelationalGenerator {
    /// The `SELECT` list of a query's result (whose columns nothing reads
    /// by name): `exprs` each under a name of its own, or, sometimes, as
    /// users write them, unnamed or all under one name; where `may_repeat`,
    /// sometimes with one of them repeated (`SELECT a + 1, a + 1`), its kind
    /// added to `kinds`. Two output columns of one name are SQL; which name
    /// each engine shows is not compared.
    fn output_list(
        &mut self,
        exprs: &mut Vec<String>,
        kinds: &mut Vec<Kind>,
        may_repeat: bool,
    ) -> String {
        if may_repeat && !exprs.is_empty() && self.rng.random_bool(0.2) {
            let index = self.rng.random_range(0..exprs.len());
            exprs.push(exprs[index].clone());
            kinds.push(kinds[index]);
        }
        match self.rng.random_range(0..10) {
            0..=5 => select_list(exprs),
            6..=8 => exprs.join(", "),
            _ => exprs
                .iter()
                .map(|expr| format!("{expr} AS c"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// A `SELECT` list of `exprs`, each under a name of its own, for a list
/// whose columns may be read by name.
fn select_list(exprs: &[String]) -> String {
    exprs
        .iter()
        .enumerate()
        .map(|(index, expr)| format!("{expr} AS c{}", index + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A qualified column of `kind` of an item of `level`, if one has a column
/// of that kind under a name of its own.
fn pick_column(rng: &mut StdRng, level: &Level, kind: Kind) -> Option<String> {
    let columns: Vec<String> = level
        .items
        .iter()
        .flat_map(|item| {
            item.columns
                .iter()
                .filter(move |(column, column_kind)| {
                    *column_kind == kind && !item.repeats(column)
                })
                .map(move |(column, _)| format!("{}.{column}", item.name))
        })
        .collect();
    (!columns.is_empty()).then(|| columns[rng.random_range(0..columns.len())].clone())
}

/// Records that a join of `right` to `left` merged `names`.
fn merge(level: &mut Level, left: &Level, right: &Item, names: &[(String, Kind)]) {
    for (name, kind) in names {
        let mut items = left.sides_of(name);
        items.push(right.name.clone());
        level.merged.retain(|merged| merged.name != *name);
        level.merged.push(Merged {
            name: name.clone(),
            kind: *kind,
            items,
        });
    }
}

/// The kinds of the columns of `SELECT *` over `level`: one per merged key
/// and one per column no key merged (not in SQL's order).
fn star_kinds(level: &Level) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = level.merged.iter().map(|merged| merged.kind).collect();
    for item in &level.items {
        for (column, kind) in &item.columns {
            let merged = level.merged.iter().any(|merged| {
                merged.name == *column && merged.items.contains(&item.name)
            });
            if !merged {
                kinds.push(*kind);
            }
        }
    }
    kinds
}
