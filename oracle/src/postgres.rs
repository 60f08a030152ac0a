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

//! A throwaway PostgreSQL server, and the rows of a query on it.
//!
//! [`Server::start`] makes a cluster in a new temporary folder with the
//! server's own `initdb` (the `C` locale, so that text sorts by bytes as it
//! does in DataFusion, and no `fsync`), starts it on a free loopback port
//! with its socket in that folder, and stops it and removes the folder when
//! dropped. PostgreSQL refuses to run as root: as root, the cluster belongs
//! to the `postgres` user (Debian's package makes it) or else `nobody`, and
//! the programs run as that user through `runuser`.
//!
//! The programs are found in `FORK_POSTGRES_BIN` if it is set (`cargo xtask
//! test` sets it, after installing Debian's `postgresql` where it is
//! missing), else in the newest `/usr/lib/postgresql/*/bin`. Without them
//! [`Server::start`] fails, saying what to install: a test of the fork
//! against PostgreSQL never passes without PostgreSQL.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

/// A running PostgreSQL server, stopped when dropped.
pub struct Server {
    bin: PathBuf,
    folder: PathBuf,
    data: PathBuf,
    /// The user the programs run as, when this process is root.
    user: Option<String>,
    port: u16,
}

impl Server {
    /// Makes and starts a new cluster.
    pub fn start() -> Result<Self, String> {
        let bin = server_programs()?;
        let user = unprivileged_user()?;
        let folder = std::env::temp_dir().join(format!(
            "fork-postgres-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |time| time.as_nanos())
        ));
        std::fs::create_dir_all(&folder).map_err(|e| format!("{folder:?}: {e}"))?;
        let data = folder.join("data");
        let mut server = Self {
            bin,
            folder,
            data,
            user,
            port: free_port()?,
        };
        if let Some(user) = &server.user {
            run(Command::new("chown").args(["-R", user]).arg(&server.folder))?;
        }
        server.run_program(
            "initdb",
            &[
                "-D",
                &server.data.to_string_lossy(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--locale=C",
                "--encoding=UTF8",
                "--no-sync",
            ],
        )?;
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off",
            server.port,
            server.folder.to_string_lossy()
        );
        let log = server.folder.join("log");
        let started = server.run_program(
            "pg_ctl",
            &[
                "-D",
                &server.data.to_string_lossy(),
                "-o",
                &options,
                "-l",
                &log.to_string_lossy(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        if let Err(error) = started {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            // Free the port for another try
            server.port = 0;
            return Err(format!("{error}\n{log}"));
        }
        Ok(server)
    }

    /// The connection string of the server's `postgres` database.
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    fn run_program(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        let path = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(&path);
                command
            }
            None => Command::new(&path),
        };
        command.args(args).current_dir(&self.folder);
        run(&mut command)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.port != 0 {
            let _ = self.run_program(
                "pg_ctl",
                &[
                    "-D",
                    &self.data.to_string_lossy(),
                    "-m",
                    "immediate",
                    "stop",
                ],
            );
        }
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// The folder of PostgreSQL's server programs.
fn server_programs() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("FORK_POSTGRES_BIN") {
        let bin = PathBuf::from(bin);
        return if bin.join("initdb").exists() {
            Ok(bin)
        } else {
            Err(format!("FORK_POSTGRES_BIN={bin:?} has no initdb"))
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "PostgreSQL's server programs (initdb, pg_ctl) are not installed: install \
         Debian's `postgresql` package (`apt-get install postgresql`), or set \
         FORK_POSTGRES_BIN to the folder that holds them; `cargo xtask test` \
         installs the package itself where it can"
            .to_string()
    })
}

/// The user the server runs as when this process is root, or none.
fn unprivileged_user() -> Result<Option<String>, String> {
    let uid = run(Command::new("id").arg("-u"))?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Ok(None);
    }
    for user in ["postgres", "nobody"] {
        if Command::new("id")
            .arg(user)
            .output()
            .is_ok_and(|output| output.status.success())
        {
            return Ok(Some(user.to_string()));
        }
    }
    Err(
        "running as root, and neither the user postgres nor nobody exists to run \
         PostgreSQL as"
            .to_string(),
    )
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|e| e.to_string())
}

fn run(command: &mut Command) -> Result<Output, String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{command:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
