#include "core/snapshot.hpp"

#include <algorithm>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unistd.h>

#include "core/hdf5_file.hpp"
#include "core/memory_plan.hpp"
#include "core/stale_files.hpp"

namespace grove {

namespace {

// One row per per-particle dataset: this table alone drives both the writer and the reader.
struct SnapshotField {
    const char* name;                // dataset name inside /PartTypeN
    int components;                  // 3 for vectors, 1 for scalars
    bool required;                   // a reader error if absent (Masses may come from MassTable instead)
    bool integer_ids;                // ParticleIDs: uint64 instead of double
    double* (*column)(ParticleSet&); // first element of the 3xN or N storage (nullptr for IDs)
    bool forces;                     // written only for particles with forces
};

const std::array<SnapshotField, 6> kFields = {{
    {"Coordinates", 3, true, false, [](ParticleSet& p) { return p.pos.data(); }, false},
    {"Velocities", 3, true, false, [](ParticleSet& p) { return p.vel.data(); }, false},
    {"Masses", 1, true, false, [](ParticleSet& p) { return p.mass.data(); }, false},
    {"ParticleIDs", 1, true, true, nullptr, false},
    {"Potential", 1, false, false, [](ParticleSet& p) { return p.pot.data(); }, true},
    {"Acceleration", 3, false, false, [](ParticleSet& p) { return p.acc.data(); }, true},
}};

std::string part_type_group(int type)
{
    return "PartType" + std::to_string(type);
}

std::array<std::vector<std::size_t>, kNumParticleTypes> indices_by_type(const ParticleSet& p)
{
    std::array<std::vector<std::size_t>, kNumParticleTypes> out;
    for (std::size_t i = 0; i < p.size(); ++i) out[p.type[i]].push_back(i);
    return out;
}

void write_header(hid_t file, const ParticleSet& p, const TypeCounts& type_counts)
{
    auto header = h5::create_group(file, "Header");
    std::vector<std::uint64_t> counts(type_counts.begin(), type_counts.end());
    std::vector<std::uint32_t> high_words(kNumParticleTypes);
    for (int t = 0; t < kNumParticleTypes; ++t) high_words[t] = static_cast<std::uint32_t>(counts[t] >> 32);
    h5::write_attribute(header.id(), "NumPart_ThisFile", counts);
    h5::write_attribute(header.id(), "NumPart_Total", counts);
    h5::write_attribute(header.id(), "NumPart_Total_HighWord", high_words);
    h5::write_attribute(header.id(), "MassTable", std::vector<double>(kNumParticleTypes, 0.0));
    h5::write_attribute(header.id(), "Time", p.time);
    h5::write_attribute(header.id(), "Redshift", 0.0);
    h5::write_attribute(header.id(), "BoxSize", 0.0);
    h5::write_attribute(header.id(), "NumFilesPerSnapshot", std::int32_t{1});
    h5::write_attribute(header.id(), "Flag_Entropy_ICs", std::int32_t{0});
    h5::write_attribute(header.id(), "Flag_DoublePrecision", std::int32_t{1});
    h5::write_attribute(header.id(), "Dimension", std::int32_t{3});

    auto units = h5::create_group(file, "Units");
    h5::write_attribute(units.id(), "UnitLength_in_cm", p.units.length_cm);
    h5::write_attribute(units.id(), "UnitMass_in_g", p.units.mass_g);
    h5::write_attribute(units.id(), "UnitVelocity_in_cm_per_s", p.units.velocity_cm_s);
    h5::write_attribute(units.id(), "UnitTime_in_s", p.units.time_s());

    auto params = h5::create_group(file, "RunParameters");
    for (const auto& [key, value] : p.run_parameters) h5::write_attribute(params.id(), key, value);
    char g_text[32];
    std::snprintf(g_text, sizeof(g_text), "%.17g", p.units.G);
    h5::write_attribute(params.id(), "UnitSystem", p.units.system);
    h5::write_attribute(params.id(), "GravitationalConstant", std::string(g_text));
}

// The datasets of `count` particles of one type, with forces or without, and `extra`'s columns.
void create_particle_datasets(hid_t file, int type, std::uint64_t count, bool forces,
                              const std::map<std::string, ParticleSet::ExtraColumn>& extra)
{
    auto group = h5::create_group(file, part_type_group(type));
    for (const auto& field : kFields)
        if (!field.forces || forces)
            h5::create_dataset(group.id(), field.name, field.integer_ids, count, field.components == 3 ? 3 : 0);
    for (const auto& [name, column] : extra) {
        const auto c = static_cast<std::size_t>(column.components);
        h5::create_dataset(group.id(), name, !column.counts.empty(), count, c == 1 ? 0 : c);
    }
}

// The particles `indices` of p (all of type `type`, whose datasets the file has) into that type's
// datasets from row `first`.
void write_particle_rows(hid_t file, const ParticleSet& p, const std::vector<std::size_t>& indices, int type,
                         std::uint64_t first)
{
    if (indices.empty()) return;
    auto group = h5::open_group(file, part_type_group(type));
    auto& mutable_p = const_cast<ParticleSet&>(p); // the column accessors are shared with the reader
    // The particles of a type are usually one run of the set (indices ascend): their columns are
    // then written in place, without a copy as large as the column.
    const std::size_t from = indices.front();
    const bool run = indices.back() - from + 1 == indices.size();
    const bool forces = p.has_forces();
    for (const auto& field : kFields) {
        if (field.forces && !forces) continue;
        if (field.integer_ids) {
            if (run) {
                h5::write_rows(group.id(), field.name, first, p.id.data() + from, indices.size());
                continue;
            }
            std::vector<std::uint64_t> ids(indices.size());
            for (std::size_t k = 0; k < indices.size(); ++k) ids[k] = p.id[indices[k]];
            h5::write_rows(group.id(), field.name, first, ids.data(), ids.size());
            continue;
        }
        const double* column = field.column(mutable_p);
        const auto c = static_cast<std::size_t>(field.components);
        if (run) {
            h5::write_rows(group.id(), field.name, first, column + from * c, indices.size());
            continue;
        }
        std::vector<double> rows(indices.size() * c);
        for (std::size_t k = 0; k < indices.size(); ++k)
            for (std::size_t j = 0; j < c; ++j) rows[k * c + j] = column[indices[k] * c + j];
        h5::write_rows(group.id(), field.name, first, rows.data(), indices.size());
    }
    for (const auto& [name, column] : p.extra) {
        const auto c = static_cast<std::size_t>(column.components);
        const bool integer = !column.counts.empty();
        if ((integer ? column.counts.size() : column.values.size()) != c * p.size())
            throw std::logic_error("snapshot: extra column " + name + " does not hold " + std::to_string(c) +
                                   " values per particle");
        std::vector<double> rows(integer ? 0 : indices.size() * c);
        std::vector<std::uint64_t> ids(integer ? indices.size() * c : 0);
        for (std::size_t k = 0; k < indices.size(); ++k)
            for (std::size_t j = 0; j < c; ++j) {
                if (integer)
                    ids[k * c + j] = column.counts[indices[k] * c + j];
                else
                    rows[k * c + j] = column.values[indices[k] * c + j];
            }
        if (integer)
            h5::write_rows(group.id(), name, first, ids.data(), indices.size());
        else
            h5::write_rows(group.id(), name, first, rows.data(), indices.size());
    }
}

TypeCounts counts_of(const std::array<std::vector<std::size_t>, kNumParticleTypes>& by_type)
{
    TypeCounts counts{};
    for (int t = 0; t < kNumParticleTypes; ++t) counts[t] = by_type[t].size();
    return counts;
}

// The unit attributes grove reads in /Units: GADGET's and SWIFT's names for the size in cgs of one
// length, mass and velocity or time unit; SWIFT's current and temperature units and GADGET's
// derived ones (no bearing on gravity, or following from the three) are known and left aside.
struct UnitNames {
    const char* length;
    const char* mass;
    const char* velocity; // null: from length / time
    const char* time;
};
constexpr UnitNames kGadgetUnits{"UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s", "UnitTime_in_s"};
constexpr UnitNames kSwiftUnits{"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)", nullptr,
                                "Unit time in cgs (U_t)"};
constexpr const char* kIgnoredUnits[] = {"Unit current in cgs (U_I)", "Unit temperature in cgs (U_T)",
                                         "UnitEnergy_in_cgs", "UnitDensity_in_cgs", "UnitPressure_in_cgs"};

// Length, mass and velocity in cgs from the /Units attributes of one convention; throws
// std::runtime_error naming what is missing.
Units read_unit_attributes(hid_t group, const UnitNames& names, const char* convention)
{
    auto read = [&](const char* name) {
        if (!h5::has_attribute(group, name))
            throw std::runtime_error(std::string("/Units has ") + convention + " unit attributes but not '" + name +
                                     "'");
        return h5::read_attribute_doubles(group, name).at(0);
    };
    const double length = read(names.length), mass = read(names.mass);
    const double velocity = names.velocity ? read(names.velocity) : length / read(names.time);
    return units_from_cgs(length, mass, velocity);
}

// Units: from /RunParameters when grove wrote the file; from /Units (cgs factors, GADGET's or
// SWIFT's names) otherwise, and GADGET's kpc, 1e10 Msun, km/s without /Units, as other GADGET codes
// do. A /Units attribute grove does not understand is refused, not guessed at: a wrong unit is a
// wrong G.
Units read_units(hid_t file, const std::map<std::string, std::string>& params)
{
    Units units = gadget_units();
    const auto system = params.find("UnitSystem");
    if (system != params.end() && (system->second == "nbody" || system->second == "gadget"))
        units = units_by_name(system->second);
    if (h5::has_link(file, "Units")) {
        auto group = h5::open_group(file, "Units");
        bool gadget = false, swift = false;
        for (const auto& [name, value] : h5::attributes_as_text(group.id())) {
            const auto is = [&](const UnitNames& n) {
                return name == n.length || name == n.mass || (n.velocity && name == n.velocity) || name == n.time;
            };
            const bool ignored =
                std::find(std::begin(kIgnoredUnits), std::end(kIgnoredUnits), name) != std::end(kIgnoredUnits);
            gadget = gadget || is(kGadgetUnits);
            swift = swift || is(kSwiftUnits);
            if (!is(kGadgetUnits) && !is(kSwiftUnits) && !ignored)
                throw std::runtime_error("unit attribute '" + name +
                                         "' in /Units is not one grove reads (GADGET's UnitLength_in_cm, UnitMass_in_g "
                                         "and UnitVelocity_in_cm_per_s, or SWIFT's 'Unit length in cgs (U_L)', 'Unit "
                                         "mass in cgs (U_M)' and 'Unit time in cgs (U_t)')");
        }
        if (gadget || swift) {
            const Units cgs = gadget ? read_unit_attributes(group.id(), kGadgetUnits, "GADGET")
                                     : read_unit_attributes(group.id(), kSwiftUnits, "SWIFT");
            if (system == params.end()) {
                units = cgs;
            } else {
                units.length_cm = cgs.length_cm;
                units.mass_g = cgs.mass_g;
                units.velocity_cm_s = cgs.velocity_cm_s;
            }
        }
    }
    const auto g = params.find("GravitationalConstant");
    if (g != params.end()) units.G = std::stod(g->second);
    return units;
}

// Reads the particles of one /PartTypeN group, checking every dataset's shape.
// `ids_missing` is set when the group has no ParticleIDs (they are optional in GADGET files).
ParticleSet read_particles(hid_t file, int type, double mass_table_entry,
                           const std::vector<std::uint64_t>& header_counts, bool& ids_missing, std::size_t first = 0,
                           std::size_t rows = static_cast<std::size_t>(-1))
{
    auto group = h5::open_group(file, part_type_group(type));
    const std::string where = "/" + part_type_group(type);
    if (!h5::has_link(group.id(), "Coordinates")) throw std::runtime_error(where + " has no Coordinates dataset");
    const auto coord_shape = h5::dataset_shape(group.id(), "Coordinates");
    if (coord_shape.size() != 2 || coord_shape[1] != 3)
        throw std::runtime_error(where + "/Coordinates must have shape (N, 3)");
    const std::size_t n = coord_shape[0];
    if (!header_counts.empty() && header_counts[type] != n)
        throw std::runtime_error(where + "/Coordinates has " + std::to_string(n) +
                                 " rows but Header/NumPart_ThisFile says " + std::to_string(header_counts[type]));

    // Rows [first, first + rows) of the group alone where asked (a rank's part of the file).
    const bool whole = rows == static_cast<std::size_t>(-1);
    if (whole) rows = n;
    if (first + rows > n) throw std::logic_error("read_particles: rows outside the group");
    const auto read_doubles = [&](const char* name) {
        return whole ? h5::read_dataset_doubles(group.id(), name)
                     : h5::read_dataset_doubles(group.id(), name, first, rows);
    };
    ParticleSet part;
    part.resize(rows, static_cast<Component>(type));
    if (n == 0) return part; // an empty group (other codes write them) has nothing to check
    bool has_forces = true;
    for (const auto& field : kFields) {
        const std::string path = where + "/" + field.name;
        if (!h5::has_link(group.id(), field.name)) {
            if (std::string(field.name) == "Masses" && mass_table_entry > 0) {
                part.mass.setConstant(mass_table_entry);
                continue;
            }
            if (field.integer_ids) { // numbered by the caller once all groups are read
                ids_missing = true;
                continue;
            }
            if (field.required)
                throw std::runtime_error(path + " is missing" +
                                         (std::string(field.name) == "Masses" ? " and Header/MassTable is zero" : ""));
            has_forces = false;
            continue;
        }
        const auto shape = h5::dataset_shape(group.id(), field.name);
        const bool shape_ok = field.components == 3 ? (shape.size() == 2 && shape[0] == n && shape[1] == 3)
                                                    : (shape.size() == 1 && shape[0] == n);
        if (!shape_ok) {
            std::string got;
            for (auto d : shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
            throw std::runtime_error(path + " has shape (" + got + "), expected (" + std::to_string(n) +
                                     (field.components == 3 ? ", 3)" : ")"));
        }
        if (field.integer_ids) {
            part.id = whole ? h5::read_dataset_u64(group.id(), field.name)
                            : h5::read_dataset_u64(group.id(), field.name, first, rows);
            continue;
        }
        if (!field.required) { // optional force fields: allocate before filling
            if (field.components == 3)
                part.acc.resize(3, static_cast<Eigen::Index>(rows));
            else
                part.pot.resize(static_cast<Eigen::Index>(rows));
        }
        const auto values = read_doubles(field.name);
        std::copy(values.begin(), values.end(), field.column(part));
    }
    if (!has_forces) {
        part.acc.resize(3, 0);
        part.pot.resize(0);
    }
    return part;
}

} // namespace

void write_snapshot(const std::string& path, const ParticleSet& particles)
{
    particles.validate("cannot write " + path);
    const std::filesystem::path target(path);
    remove_stale_temporaries(target.parent_path().string(), target.filename().string() + ".tmp.");
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    try {
        const auto by_type = indices_by_type(particles);
        {
            auto file = h5::create_file(temporary);
            write_header(file.id(), particles, counts_of(by_type));
            for (int t = 0; t < kNumParticleTypes; ++t)
                if (!by_type[t].empty()) {
                    create_particle_datasets(file.id(), t, by_type[t].size(), particles.has_forces(), particles.extra);
                    write_particle_rows(file.id(), particles, by_type[t], t, 0);
                }
            h5::finish_file(file, temporary);
        }
        if (std::rename(temporary.c_str(), path.c_str()) != 0)
            throw std::runtime_error("cannot rename the finished file into place");
    } catch (const std::exception& e) {
        std::remove(temporary.c_str());
        throw std::runtime_error("cannot write " + path + ": " + e.what());
    }
}

void create_snapshot(const std::string& path, const ParticleSet& header, const TypeCounts& counts, bool forces)
{
    try {
        auto file = h5::create_file(path);
        write_header(file.id(), header, counts);
        for (int t = 0; t < kNumParticleTypes; ++t)
            if (counts[t] > 0) create_particle_datasets(file.id(), t, counts[t], forces, {});
        h5::close_file(file, path);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot write " + path + ": " + e.what());
    }
}

void write_snapshot_rows(const std::string& path, const ParticleSet& part, const TypeCounts& first)
{
    if (part.size() == 0) return; // a process with none
    part.validate("cannot write " + path);
    if (!part.extra.empty()) throw std::invalid_argument("write_snapshot_rows: a part with extra columns");
    try {
        auto file = h5::open_file_rw(path);
        const auto by_type = indices_by_type(part);
        for (int t = 0; t < kNumParticleTypes; ++t) write_particle_rows(file.id(), part, by_type[t], t, first[t]);
        h5::close_file(file, path);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot write " + path + ": " + e.what());
    }
}

void seal_snapshot(const std::string& temporary, const std::string& path)
{
    try {
        h5::sync_file(temporary);
        if (std::rename(temporary.c_str(), path.c_str()) != 0)
            throw std::runtime_error("cannot rename the finished file into place");
    } catch (const std::exception& e) {
        std::remove(temporary.c_str());
        throw std::runtime_error("cannot write " + path + ": " + e.what());
    }
}

namespace {

// The particle count of an open file (snapshot_particle_count).
std::uint64_t particle_count(hid_t file)
{
    std::uint64_t total = 0;
    const auto add = [&](std::uint64_t count) {
        if (count > std::numeric_limits<std::uint64_t>::max() - total)
            throw std::runtime_error("the particle counts overflow 64 bits (a damaged header?)");
        total += count;
    };
    if (h5::has_link(file, "Header")) {
        auto header = h5::open_group(file, "Header");
        if (h5::has_attribute(header.id(), "NumPart_ThisFile")) {
            for (const std::uint64_t c : h5::read_attribute_u64(header.id(), "NumPart_ThisFile")) add(c);
            return total;
        }
    }
    for (int t = 0; t < kNumParticleTypes; ++t) {
        const std::string group = part_type_group(t);
        if (!h5::has_link(file, group)) continue;
        auto g = h5::open_group(file, group);
        if (h5::has_link(g.id(), "Coordinates")) add(h5::dataset_shape(g.id(), "Coordinates").at(0));
    }
    return total;
}

} // namespace

namespace {

// The files of a snapshot split over `count` of them, from the name of any: BASE.K.hdf5 (or .h5).
std::vector<std::string> split_snapshot_files(const std::string& path, int count)
{
    const std::filesystem::path p(path);
    const std::string name = p.filename().string();
    const auto ext = name.rfind('.');
    const auto dot = ext == std::string::npos || ext == 0 ? std::string::npos : name.rfind('.', ext - 1);
    const std::string number = dot == std::string::npos ? "" : name.substr(dot + 1, ext - dot - 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos)
        throw std::runtime_error("its header says the snapshot is split over " + std::to_string(count) +
                                 " files, but its name is not BASE.K" +
                                 name.substr(ext == std::string::npos ? 0 : ext));
    std::vector<std::string> files;
    for (int k = 0; k < count; ++k)
        files.push_back(
            (p.parent_path() / (name.substr(0, dot) + "." + std::to_string(k) + name.substr(ext))).string());
    return files;
}

// NumFilesPerSnapshot of an open file (1 where it says nothing).
int files_per_snapshot(hid_t file)
{
    if (!h5::has_link(file, "Header")) return 1;
    auto header = h5::open_group(file, "Header");
    if (!h5::has_attribute(header.id(), "NumFilesPerSnapshot")) return 1;
    return static_cast<int>(h5::read_attribute_u64(header.id(), "NumFilesPerSnapshot").at(0));
}

// The particles [begin, end) of one file in file order (all of them by default).
ParticleSet read_one_file(const std::string& path, std::uint64_t begin = 0,
                          std::uint64_t end = std::numeric_limits<std::uint64_t>::max());

} // namespace

std::uint64_t hdf5_particle_count(const std::string& path)
{
    try {
        auto file = h5::open_file_read(path);
        const int files = files_per_snapshot(file.id());
        if (files <= 1) return particle_count(file.id());
        std::uint64_t total = 0;
        for (const std::string& part : split_snapshot_files(path, files)) {
            auto f = h5::open_file_read(part);
            total += particle_count(f.id());
        }
        return total;
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

namespace {

// How many files the snapshot at `path` is split over (1: not split).
int snapshot_files(const std::string& path)
{
    try {
        auto file = h5::open_file_read(path);
        return files_per_snapshot(file.id());
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

} // namespace

ParticleSet read_hdf5_snapshot_part(const std::string& path, std::uint64_t begin, std::uint64_t end)
{
    if (begin > end) throw std::invalid_argument("read_hdf5_snapshot_part: begin after end");
    if (snapshot_files(path) <= 1) return read_one_file(path, begin, end);
    // Split over files: read whole, then cut (the files' own counts would say which to open).
    return particle_range(read_hdf5_snapshot(path), begin, end);
}

ParticleSet read_hdf5_snapshot(const std::string& path)
{
    const int files = snapshot_files(path);
    if (files <= 1) return read_one_file(path);
    std::vector<std::string> parts;
    try {
        parts = split_snapshot_files(path, files);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    ParticleSet out = read_one_file(parts[0]);
    for (std::size_t k = 1; k < parts.size(); ++k) out = concatenate(out, read_one_file(parts[k]));
    out.validate("the snapshot in " + std::to_string(files) + " files from " + parts[0]);
    return out;
}

namespace {

ParticleSet read_one_file(const std::string& path, std::uint64_t begin, std::uint64_t end)
{
    ParticleSet out;
    try {
        auto file = h5::open_file_read(path);
        // Planned from the header's counts, or the datasets' lengths without one, before any read.
        const std::uint64_t total = particle_count(file.id());
        end = std::min(end, total);
        begin = std::min(begin, end);
        check_memory_plan(Workload::read, static_cast<std::size_t>(end - begin),
                          "reading " + std::to_string(end - begin) + " particles");
        std::vector<std::uint64_t> header_counts;
        std::vector<double> mass_table(kNumParticleTypes, 0.0);
        if (h5::has_link(file.id(), "Header")) {
            auto header = h5::open_group(file.id(), "Header");
            if (h5::has_attribute(header.id(), "NumPart_ThisFile"))
                header_counts = h5::read_attribute_u64(header.id(), "NumPart_ThisFile");
            if (!header_counts.empty() && header_counts.size() != kNumParticleTypes)
                throw std::runtime_error("Header/NumPart_ThisFile must have 6 entries");
            if (h5::has_attribute(header.id(), "MassTable"))
                mass_table = h5::read_attribute_doubles(header.id(), "MassTable");
            if (mass_table.size() != kNumParticleTypes)
                throw std::runtime_error("Header/MassTable must have 6 entries");
            if (h5::has_attribute(header.id(), "Time"))
                out.time = h5::read_attribute_doubles(header.id(), "Time").at(0);
        }
        if (h5::has_link(file.id(), "RunParameters")) {
            auto params = h5::open_group(file.id(), "RunParameters");
            for (auto& [key, value] : h5::attributes_as_text(params.id())) out.run_parameters[key] = value;
        }
        out.units = read_units(file.id(), out.run_parameters);

        bool any_group = false, ids_missing = false;
        const bool whole = begin == 0 && end == total;
        std::uint64_t offset = 0; // the particles of the groups before this one
        for (int t = 0; t < kNumParticleTypes; ++t) {
            if (!h5::has_link(file.id(), part_type_group(t))) continue;
            std::size_t first = 0, rows = static_cast<std::size_t>(-1); // the group's part of [begin, end)
            if (!whole) {
                auto group = h5::open_group(file.id(), part_type_group(t));
                const auto shape = h5::has_link(group.id(), "Coordinates")
                                       ? h5::dataset_shape(group.id(), "Coordinates")
                                       : std::vector<hsize_t>{};
                const std::uint64_t n = shape.empty() ? 0 : shape[0];
                const std::uint64_t lo = std::clamp(begin, offset, offset + n),
                                    hi = std::clamp(end, offset, offset + n);
                first = static_cast<std::size_t>(lo - offset);
                rows = static_cast<std::size_t>(hi - lo);
                offset += n;
                // None of it in the part: passed over (an empty part would drop the others' forces in
                // concatenate); a group without Coordinates goes on to be refused.
                if (rows == 0 && !shape.empty()) continue;
            }
            ParticleSet part = read_particles(file.id(), t, mass_table[t], header_counts, ids_missing, first, rows);
            out = any_group ? concatenate(out, part) : [&] {
                part.time = out.time;
                part.units = out.units;
                part.run_parameters = out.run_parameters;
                return part;
            }();
            any_group = true;
        }
        if (!any_group && !whole) return out; // a part past the particles: none
        if (!any_group) throw std::runtime_error("no particle groups (PartType0..PartType5)");
        if (ids_missing) {
            for (std::size_t i = 0; i < out.size(); ++i) out.id[i] = begin + i + 1;
            std::fprintf(stderr, "grove: %s has no ParticleIDs; its particles are numbered 1..%zu in file order\n",
                         path.c_str(), out.size());
        }
        if (whole || out.size() > 0) out.validate("particle data"); // a rank's part may hold none
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return out;
}

} // namespace

} // namespace grove
