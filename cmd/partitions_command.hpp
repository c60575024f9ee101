#pragma once

namespace nf::cmd {

/// `nodeflow partitions [--dsn DSN] [--drop-expired]`: creates the range
/// partitions that should exist by the server's clock (adopting rows waiting in
/// DEFAULT), prints what this run created, and with --drop-expired also drops
/// partitions past retention. Safe to run while nodes do the same.
int run_partitions_command(int argc, char** argv);

} // namespace nf::cmd
