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
//! are read as one where the parenthesized query is followed by what only
//! a query can go on with: a set operator, `ORDER BY`, `LIMIT`, `OFFSET`
//! or `FETCH`. Anything else, `((SELECT 2) + 1)` or `((SELECT 2))`, is
//! read as an expression, as before. The check looks at tokens only, so no
//! part of the SQL is parsed twice (a failed attempt at each of several
//! nested parentheses would multiply the work).

#[cfg(not(feature = "std"))]
use alloc::boxed::Box;

use crate::ast::Query;
use crate::keywords::Keyword;
use crate::tokenizer::Token;

use super::{Parser, ParserError};

impl Parser<'_> {
    /// After an expression's `(`: the query the parentheses hold, where it
    /// starts with a parenthesized query that a query clause follows.
    pub(super) fn try_parse_parenthesized_set_operation(
        &mut self,
    ) -> Result<Option<Box<Query>>, ParserError> {
        if !self.peek_parenthesized_query_continued() {
            return Ok(None);
        }
        let query = self.parse_query()?;
        if self.peek_token_ref().token != Token::RParen {
            return self.expected_ref(")", self.peek_token_ref());
        }
        Ok(Some(query))
    }

    /// Whether the next tokens are a parenthesized `SELECT` or `WITH`
    /// query and, after its closing parenthesis, a clause of a query. One
    /// pass over the tokens (peeking the n-th token walks from the start).
    fn peek_parenthesized_query_continued(&self) -> bool {
        let mut tokens = self.tokens[self.index..]
            .iter()
            .map(|token| &token.token)
            .filter(|token| !matches!(token, Token::Whitespace(_)));
        let mut depth = 0_usize;
        let mut starts_query = false;
        for token in tokens.by_ref() {
            match token {
                Token::LParen => depth += 1,
                Token::Word(word)
                    if depth > 0
                        && matches!(word.keyword, Keyword::SELECT | Keyword::WITH) =>
                {
                    starts_query = true;
                    break;
                }
                _ => return false,
            }
        }
        if !starts_query {
            return false;
        }
        for token in tokens.by_ref() {
            match token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::EOF => return false,
                _ => {}
            }
        }
        depth == 0
            && matches!(
                tokens.next(),
                Some(Token::Word(word)) if matches!(
                    word.keyword,
                    Keyword::UNION
                        | Keyword::EXCEPT
                        | Keyword::INTERSECT
                        | Keyword::MINUS
                        | Keyword::ORDER
                        | Keyword::LIMIT
                        | Keyword::OFFSET
                        | Keyword::FETCH
                )
            )
    }
}
