#include "src/checkpoint.hpp"

#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include "src/hdf5_file.hpp"
#include "src/snapshot.hpp"

namespace grove {

namespace {

constexpr char kSeparator = '\x1f';

std::string join(const std::vector<std::string>& parts)
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(1, kSeparator) : "") + parts[i];
    return out;
}

std::vector<std::string> split(const std::string& text)
{
    std::vector<std::string> out(1);
    for (char c : text)
        if (c == kSeparator)
            out.emplace_back();
        else
            out.back() += c;
    return out;
}

} // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c)
{
    const std::string tmp = path + ".partial";
    write_snapshot(tmp, c.particles);
    {
        h5::Handle file = h5::open_file_rw(tmp);
        h5::Handle g = h5::create_group(file.id(), "Checkpoint");
        h5::write_attribute(g.id(), "argv", join(c.argv));
        h5::write_attribute(g.id(), "step", static_cast<double>(c.step));
        h5::write_attribute(g.id(), "next_snapshot", c.next_snapshot);
        h5::write_attribute(g.id(), "snapshot_index", static_cast<std::int32_t>(c.snapshot_index));
        h5::write_attribute(g.id(), "reference_energy", c.reference_energy);
        h5::write_attribute(g.id(), "diagnostics_bytes", static_cast<double>(c.diagnostics_bytes));
        h5::write_attribute(g.id(), "block_steps", static_cast<double>(c.block_steps));
        h5::write_attribute(g.id(), "particle_steps", static_cast<double>(c.particle_steps));
        // The snapshot groups particles by type; this restores the order they had in memory,
        // on which the force sums' rounding depends.
        h5::write_dataset(g.id(), "memory_order_ids", c.particles.id.data(), c.particles.id.size());
        if (c.jerk.cols() > 0) {
            const auto n = static_cast<std::size_t>(c.jerk.cols());
            h5::write_dataset(g.id(), "jerk", c.jerk.data(), n, 3);
            h5::write_dataset(g.id(), "particle_time", c.particle_time.data(), n, 1);
            h5::write_dataset(g.id(), "particle_step", c.particle_step.data(), n, 1);
        }
    }
    std::filesystem::rename(tmp, path);
}

Checkpoint read_checkpoint(const std::string& path)
{
    Checkpoint c;
    const ParticleSet p = read_snapshot(path);
    h5::Handle file = h5::open_file_read(path);
    if (!h5::has_link(file.id(), "Checkpoint")) throw std::runtime_error(path + ": not a grove checkpoint");
    h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    c.argv = split(h5::read_attribute_string(g.id(), "argv"));
    c.step = static_cast<long long>(h5::read_attribute_doubles(g.id(), "step").at(0));
    c.next_snapshot = h5::read_attribute_doubles(g.id(), "next_snapshot").at(0);
    c.snapshot_index = static_cast<int>(h5::read_attribute_doubles(g.id(), "snapshot_index").at(0));
    c.reference_energy = h5::read_attribute_doubles(g.id(), "reference_energy").at(0);
    c.diagnostics_bytes = static_cast<long long>(h5::read_attribute_doubles(g.id(), "diagnostics_bytes").at(0));
    c.block_steps = static_cast<long long>(h5::read_attribute_doubles(g.id(), "block_steps").at(0));
    c.particle_steps = static_cast<long long>(h5::read_attribute_doubles(g.id(), "particle_steps").at(0));
    const std::vector<std::uint64_t> ids = h5::read_dataset_u64(g.id(), "memory_order_ids");
    if (ids.size() != p.size()) throw std::runtime_error(path + ": checkpoint order does not match its particles");
    std::unordered_map<std::uint64_t, Eigen::Index> where;
    for (std::size_t i = 0; i < p.size(); ++i) where[p.id[i]] = static_cast<Eigen::Index>(i);
    c.particles = p;
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const auto it = where.find(ids[k]);
        if (it == where.end()) throw std::runtime_error(path + ": checkpoint order names an unknown particle");
        const Eigen::Index i = it->second, o = static_cast<Eigen::Index>(k);
        c.particles.pos.col(o) = p.pos.col(i);
        c.particles.vel.col(o) = p.vel.col(i);
        c.particles.mass[o] = p.mass[i];
        c.particles.id[k] = p.id[static_cast<std::size_t>(i)];
        c.particles.type[k] = p.type[static_cast<std::size_t>(i)];
        if (p.has_forces()) {
            c.particles.acc.col(o) = p.acc.col(i);
            c.particles.pot[o] = p.pot[i];
        }
    }
    if (h5::has_link(g.id(), "jerk")) {
        const auto j = h5::read_dataset_doubles(g.id(), "jerk");
        const auto t = h5::read_dataset_doubles(g.id(), "particle_time");
        const auto s = h5::read_dataset_doubles(g.id(), "particle_step");
        const auto n = static_cast<Eigen::Index>(ids.size());
        c.jerk = Eigen::Map<const Eigen::Matrix3Xd>(j.data(), 3, n);
        c.particle_time = Eigen::Map<const Eigen::VectorXd>(t.data(), n);
        c.particle_step = Eigen::Map<const Eigen::VectorXd>(s.data(), n);
    }
    return c;
}

} // namespace grove
