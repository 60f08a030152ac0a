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

//! A query inside an expression's parentheses whose first set operand is
//! itself in parentheses: `SELECT ((SELECT 2) UNION SELECT 2)`, also
//! `(((SELECT 2)) UNION ...)` and `((SELECT 2) ORDER BY 1 LIMIT 1)`.
//!
//! The expression parser reads a `(` as a subquery only when `SELECT` or
//! `WITH` follows it; after `((` it reads an expression, the subquery
//! `(SELECT 2)`, and then wants `)` where `UNION` stands. PostgreSQL reads
//! such parentheses as a query (its `select_with_parens`), so here they
//! are read as one where the whole of them parses as a query that is more
//! than a query in parentheses. Anything else, `((SELECT 2) + 1)` or
//! `((SELECT 2))`, is read as an expression, as before.

#[cfg(not(feature = "std"))]
use alloc::boxed::Box;

use crate::ast::{Query, SetExpr};
use crate::keywords::Keyword;
use crate::tokenizer::Token;

use super::{Parser, ParserError};

impl Parser<'_> {
    /// After an expression's `(`: the query the parentheses hold, where it
    /// starts with a parenthesized query and goes on past it.
    pub(super) fn try_parse_parenthesized_set_operation(
        &mut self,
    ) -> Result<Option<Box<Query>>, ParserError> {
        let mut opening = 0;
        while self.peek_nth_token_ref(opening).token == Token::LParen {
            opening += 1;
        }
        let starts_query = matches!(
            &self.peek_nth_token_ref(opening).token,
            Token::Word(word) if matches!(word.keyword, Keyword::SELECT | Keyword::WITH)
        );
        if opening == 0 || !starts_query {
            return Ok(None);
        }
        self.maybe_parse(|parser| {
            let query = parser.parse_query()?;
            let only_parenthesized = matches!(*query.body, SetExpr::Query(_))
                && query.with.is_none()
                && query.order_by.is_none()
                && query.limit_clause.is_none()
                && query.fetch.is_none();
            if only_parenthesized {
                return parser.expected_ref("a set operation", parser.peek_token_ref());
            }
            if parser.peek_token_ref().token != Token::RParen {
                return parser.expected_ref(")", parser.peek_token_ref());
            }
            Ok(query)
        })
    }
}
