// grove: GPU Barnes-Hut treecode for galactic dynamics. Dispatches to one subcommand.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "parallel/communicator.hpp"

namespace {

struct Command {
    const char* name;
    int (*run)(int, char**);
    const char* summary;
};

const Command kCommands[] = {
    {"ic", grove::command_ic, "make initial conditions: plummer, hernquist, galaxy, uniform"},
    {"info", grove::command_info, "describe a snapshot: counts, units, mass, energy, run parameters"},
    {"forces", grove::command_forces, "compute accelerations and potentials with a chosen engine"},
    {"run", grove::command_run,
     "evolve a snapshot (leapfrog or Hermite): snapshots, diagnostics, checkpoints, restarts"},
    {"accuracy", grove::command_accuracy,
     "tree-versus-direct errors over a range of theta (or alpha), or the value for a target"},
    {"export", grove::command_export, "write a snapshot's particles as text (m x y z vx vy vz)"},
    {"convert", grove::command_convert, "write a particle file in another format (HDF5, tipsy, GADGET binary)"},
    {"bench", grove::command_bench,
     "timings: direct and Hermite kernels, the tree engine, the host build, leapfrog steps"},
};

void print_usage()
{
    std::cout
        << "grove: GPU Barnes-Hut treecode for galactic dynamics\n\nusage: grove <command> [options]\n\ncommands:\n";
    for (const auto& c : kCommands)
        std::cout << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
    std::cout << "\n`grove <command> --help` lists each command's options.\n";
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
        print_usage();
        return argc < 2 ? 2 : 0;
    }
    grove::Communicator& comm = grove::Communicator::world();
    for (const auto& c : kCommands) {
        if (std::strcmp(argv[1], c.name) != 0) continue;
        const std::string rank = comm.size() > 1 ? " (rank " + std::to_string(comm.rank()) + ")" : "";
        try {
            // Under mpirun: the commands that spread their work; the others are refused at once.
            if (comm.size() > 1 && std::strcmp(c.name, "forces") != 0 && std::strcmp(c.name, "run") != 0 &&
                std::strcmp(c.name, "accuracy") != 0 && std::strcmp(c.name, "bench") != 0)
                throw std::runtime_error("runs as one process; under mpirun only `grove forces`, `grove run`, "
                                         "`grove accuracy` and `grove bench scaling` spread their work");
            const int status = c.run(argc - 1, argv + 1);
            comm.finalize();
            return status;
        } catch (const std::bad_alloc&) {
            // One rank failing ends the whole job (comm.abort), never leaving the others waiting.
            comm.abort(std::string("grove ") + c.name + rank +
                           ": error: out of memory (the problem does not fit this machine)",
                       1);
        } catch (const std::exception& e) {
            // Leave without the library's exit handlers: after a failed write (a full disk) HDF5
            // keeps the broken file open and crashed closing it at exit. Nothing is lost: our
            // files are complete and renamed into place, or removed.
            comm.abort(std::string("grove ") + c.name + rank + ": error: " + e.what(), 1);
        }
    }
    std::cerr << "grove: unknown command '" << argv[1] << "' (see grove --help)" << std::endl;
    return 2;
}
