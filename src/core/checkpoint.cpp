#include "core/checkpoint.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include "core/checksum.hpp"
#include "core/hdf5_file.hpp"
#include "core/snapshot.hpp"

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
    if (text.empty()) return {};
    for (char c : text)
        if (c == kSeparator)
            out.emplace_back();
        else
            out.back() += c;
    return out;
}

// The particles' arrays, in the order a run on domains sums them in pieces (parallel/domain_files.cpp).
void add_checkpoint_particles(Checksum& sum, const ParticleSet& p)
{
    sum.add_matrix(p.pos);
    sum.add_matrix(p.vel);
    sum.add_matrix(p.mass);
    sum.add_matrix(p.acc);
    sum.add_matrix(p.pot);
    sum.add(p.id.data(), p.id.size() * sizeof(std::uint64_t));
    sum.add(p.type.data(), p.type.size());
}

} // namespace

void add_checkpoint_record(Checksum& sum, const Checkpoint& c)
{
    const ParticleSet& p = c.particles;
    sum.add(p.time);
    for (const double u : {p.units.G, p.units.length_cm, p.units.mass_g, p.units.velocity_cm_s}) sum.add(u);
    // The snapshot adds the unit system's own parameters to the file; G above covers them.
    for (const auto& [key, value] : p.run_parameters) {
        if (key == "UnitSystem" || key == "GravitationalConstant") continue;
        sum.add(key);
        sum.add(value);
    }
    for (const std::string& arg : c.argv) sum.add(arg);
    sum.add(c.step);
    sum.add(c.next_snapshot);
    sum.add(c.snapshot_index);
    sum.add(c.reference_energy);
    sum.add(c.start_time);
    sum.add(c.diagnostics_bytes);
    for (const StateField& f : c.integrator.fields) {
        sum.add(f.name);
        sum.add_matrix(f.values);
    }
    for (const auto& [name, value] : c.integrator.counters) {
        sum.add(name);
        sum.add(value);
    }
    for (const StateArray& a : c.integrator.arrays) { // after the rest: older checkpoints sum as they did
        sum.add(a.name);
        sum.add(static_cast<long long>(a.values.size()));
        for (double v : a.values) sum.add(v);
    }
}

std::uint64_t checkpoint_checksum(const Checkpoint& c)
{
    Checksum sum;
    add_checkpoint_particles(sum, c.particles);
    add_checkpoint_record(sum, c);
    return sum.value();
}

void add_checkpoint_group(const std::string& path, const Checkpoint& c, std::size_t count)
{
    h5::Handle file = h5::open_file_rw(path);
    h5::Handle g = h5::create_group(file.id(), "Checkpoint");
    h5::write_attribute(g.id(), "argv", join(c.argv));
    h5::write_attribute(g.id(), "step", static_cast<double>(c.step));
    h5::write_attribute(g.id(), "next_snapshot", c.next_snapshot);
    h5::write_attribute(g.id(), "snapshot_index", static_cast<std::int32_t>(c.snapshot_index));
    h5::write_attribute(g.id(), "reference_energy", c.reference_energy);
    h5::write_attribute(g.id(), "start_time", c.start_time);
    h5::write_attribute(g.id(), "diagnostics_bytes", static_cast<double>(c.diagnostics_bytes));
    // The snapshot groups particles by type; this restores the order they had in memory, on
    // which the force sums' rounding depends.
    h5::create_dataset(g.id(), "memory_order_ids", true, count, 0);
    std::vector<std::string> field_names, counter_names;
    for (const StateField& f : c.integrator.fields) {
        if (f.values.cols() != static_cast<Eigen::Index>(count))
            throw std::logic_error("checkpoint: field " + f.name + " does not have one column per particle");
        field_names.push_back(f.name);
        h5::write_dataset(g.id(), f.name, f.values.data(), static_cast<std::size_t>(f.values.cols()),
                          static_cast<std::size_t>(f.values.rows()));
    }
    for (const auto& [name, value] : c.integrator.counters) {
        counter_names.push_back(name);
        h5::write_attribute(g.id(), name, static_cast<double>(value));
    }
    h5::write_attribute(g.id(), "state_fields", join(field_names));
    h5::write_attribute(g.id(), "state_counters", join(counter_names));
    if (!c.integrator.arrays.empty()) {
        std::vector<std::string> array_names;
        for (const StateArray& a : c.integrator.arrays) {
            array_names.push_back(a.name);
            h5::write_dataset(g.id(), a.name, a.values.data(), a.values.size(), 1);
        }
        h5::write_attribute(g.id(), "state_arrays", join(array_names));
    }
    g.reset();
    h5::close_file(file, path); // seal_checkpoint puts it on the disk
}

void write_memory_order_rows(const std::string& path, const std::vector<std::uint64_t>& ids, std::size_t first)
{
    h5::Handle file = h5::open_file_rw(path);
    h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    h5::write_rows(g.id(), "memory_order_ids", first, ids.data(), ids.size());
    g.reset();
    h5::close_file(file, path);
}

void seal_checkpoint(const std::string& path, std::uint64_t checksum)
{
    h5::Handle file = h5::open_file_rw(path);
    h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    h5::write_attribute(g.id(), "checksum", std::vector<std::uint64_t>{checksum});
    g.reset();
    h5::finish_file(file, path);
}

void write_checkpoint(const std::string& path, const Checkpoint& c)
{
    const std::string tmp = path + ".partial";
    try {
        write_snapshot(tmp, c.particles);
        add_checkpoint_group(tmp, c, c.particles.size());
        write_memory_order_rows(tmp, c.particles.id, 0);
        // The snapshot keeps every value bit for bit and the memory order restores the particles'
        // order: the restart reads back what this sums.
        seal_checkpoint(tmp, checkpoint_checksum(c));
    } catch (...) {
        std::remove(tmp.c_str()); // the previous checkpoint stays as it was
        throw;
    }
    // Only a complete checkpoint replaces the previous one.
    std::filesystem::rename(tmp, path);
}

std::optional<CheckpointPlace> checkpoint_place(const std::string& path)
{
    const h5::Handle file = h5::open_file_read(path);
    if (!h5::has_link(file.id(), "Checkpoint")) return std::nullopt;
    const h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    CheckpointPlace place;
    place.step = static_cast<long long>(h5::read_attribute_doubles(g.id(), "step").at(0));
    if (h5::has_attribute(g.id(), "state_counters"))
        for (const std::string& name : split(h5::read_attribute_string(g.id(), "state_counters")))
            if (name == "tick") place.tick = static_cast<long long>(h5::read_attribute_doubles(g.id(), name).at(0));
    return place;
}

Checkpoint read_checkpoint_record(const std::string& path, std::optional<std::uint64_t>* sealed)
{
    Checkpoint c;
    h5::Handle file = h5::open_file_read(path);
    if (!h5::has_link(file.id(), "Checkpoint")) throw std::runtime_error(path + ": not a grove checkpoint");
    h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    c.argv = split(h5::read_attribute_string(g.id(), "argv"));
    c.step = static_cast<long long>(h5::read_attribute_doubles(g.id(), "step").at(0));
    c.next_snapshot = h5::read_attribute_doubles(g.id(), "next_snapshot").at(0);
    c.snapshot_index = static_cast<int>(h5::read_attribute_doubles(g.id(), "snapshot_index").at(0));
    c.reference_energy = h5::read_attribute_doubles(g.id(), "reference_energy").at(0);
    c.has_start_time = h5::has_attribute(g.id(), "start_time");
    if (c.has_start_time) c.start_time = h5::read_attribute_doubles(g.id(), "start_time").at(0);
    c.diagnostics_bytes = static_cast<long long>(h5::read_attribute_doubles(g.id(), "diagnostics_bytes").at(0));
    // Checkpoints before the field list named Hermite's state directly.
    std::vector<std::string> fields, counters;
    if (h5::has_attribute(g.id(), "state_fields")) {
        fields = split(h5::read_attribute_string(g.id(), "state_fields"));
        counters = split(h5::read_attribute_string(g.id(), "state_counters"));
    } else if (h5::has_link(g.id(), "jerk")) {
        fields = {"jerk", "particle_time", "particle_step"};
        counters = {"block_steps", "particle_steps"};
    }
    const auto n = static_cast<Eigen::Index>(h5::dataset_shape(g.id(), "memory_order_ids").at(0));
    for (const std::string& name : fields) {
        if (name.empty()) continue;
        if (!h5::has_link(g.id(), name)) throw std::runtime_error(path + ": checkpoint field " + name + " is missing");
        const auto shape = h5::dataset_shape(g.id(), name);
        const auto rows = static_cast<Eigen::Index>(shape.size() > 1 ? shape[1] : 1);
        const auto values = h5::read_dataset_doubles(g.id(), name);
        if (static_cast<Eigen::Index>(values.size()) != rows * n)
            throw std::runtime_error(path + ": checkpoint field " + name + " does not match the particles");
        c.integrator.fields.push_back({name, Eigen::Map<const Eigen::MatrixXd>(values.data(), rows, n)});
    }
    if (h5::has_attribute(g.id(), "state_arrays"))
        for (const std::string& name : split(h5::read_attribute_string(g.id(), "state_arrays"))) {
            if (name.empty()) continue;
            if (!h5::has_link(g.id(), name))
                throw std::runtime_error(path + ": checkpoint array " + name + " is missing");
            c.integrator.arrays.push_back({name, h5::read_dataset_doubles(g.id(), name)});
        }
    for (const std::string& name : counters)
        if (!name.empty())
            c.integrator.counters.emplace_back(name,
                                               static_cast<long long>(h5::read_attribute_doubles(g.id(), name).at(0)));
    // Checkpoints written before the checksum have none to check.
    if (sealed != nullptr)
        *sealed = h5::has_attribute(g.id(), "checksum")
                      ? std::optional<std::uint64_t>(h5::read_attribute_u64(g.id(), "checksum").at(0))
                      : std::nullopt;
    return c;
}

void check_sealed(const std::string& path, std::optional<std::uint64_t> sealed, std::uint64_t sum)
{
    if (sealed && *sealed != sum)
        throw std::runtime_error(path + ": the checkpoint's checksum does not match its contents: it was changed or "
                                        "damaged after it was written, and a run continued from it would not be the "
                                        "run it claims to continue");
}

Checkpoint read_checkpoint(const std::string& path)
{
    const ParticleSet p = read_hdf5_snapshot(path);
    std::optional<std::uint64_t> sealed;
    Checkpoint c = read_checkpoint_record(path, &sealed);
    std::vector<std::uint64_t> ids;
    {
        h5::Handle file = h5::open_file_read(path);
        h5::Handle g = h5::open_group(file.id(), "Checkpoint");
        ids = h5::read_dataset_u64(g.id(), "memory_order_ids");
    }
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
    check_sealed(path, sealed, checkpoint_checksum(c));
    return c;
}

std::vector<std::uint64_t> read_memory_order_rows(const std::string& path, std::size_t first, std::size_t rows)
{
    h5::Handle file = h5::open_file_read(path);
    h5::Handle g = h5::open_group(file.id(), "Checkpoint");
    return h5::read_dataset_u64(g.id(), "memory_order_ids", first, rows);
}

} // namespace grove
