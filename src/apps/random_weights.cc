#include "apps/random_weights.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "tensor/quant.h"

namespace ds::apps {
namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t HashName(uint64_t seed, const std::string& name) {
  uint64_t h = seed ^ 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in (0, 1), never 0 so the logarithm below is finite.
double UnitUniform(uint64_t* state) { return ((SplitMix64(state) >> 11) + 0.5) * 0x1.0p-53; }

int64_t Product(const std::vector<int64_t>& ne) {
  return std::accumulate(ne.begin(), ne.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::vector<uint8_t> FloatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

std::vector<float> RandomWeights::Normal(const std::string& name, int64_t count, float mean,
                                         float stddev) {
  uint64_t state = HashName(seed_, name);
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; i += 2) {
    // Box-Muller: two independent normals per pair of uniforms.
    double radius = std::sqrt(-2.0 * std::log(UnitUniform(&state)));
    double angle = 2.0 * M_PI * UnitUniform(&state);
    values[i] = mean + stddev * static_cast<float>(radius * std::cos(angle));
    if (i + 1 < count) values[i + 1] = mean + stddev * static_cast<float>(radius * std::sin(angle));
  }
  return values;
}

tensor::DType RandomWeights::TypeForRow(int64_t n_cols) const {
  if (n_cols % tensor::Traits(matrix_dtype_).block_elems == 0) return matrix_dtype_;
  if (n_cols % 32 == 0) return tensor::DType::kQ8_0;
  return tensor::DType::kF32;
}

void RandomWeights::Matrix(const std::string& name, std::vector<int64_t> ne, float stddev) {
  AddQuantized(name, ne, Normal(name, Product(ne), 0.0f, stddev));
}

void RandomWeights::FusedMatrices(const std::string& name, const std::vector<std::string>& parts,
                                  int64_t n_cols, int64_t n_rows, int64_t n_mats, float stddev) {
  const int64_t part_size = n_cols * n_rows;
  std::vector<float> fused;
  fused.reserve(part_size * n_mats * parts.size());
  std::vector<std::vector<float>> drawn;
  for (const std::string& part : parts) drawn.push_back(Normal(part, part_size * n_mats, 0, stddev));
  for (int64_t m = 0; m < n_mats; ++m) {
    for (const std::vector<float>& values : drawn) {
      fused.insert(fused.end(), values.begin() + m * part_size,
                   values.begin() + (m + 1) * part_size);
    }
  }
  const int64_t n_parts = static_cast<int64_t>(parts.size());
  AddQuantized(name, {n_cols, n_parts * n_rows, n_mats}, fused);
}

void RandomWeights::AddQuantized(const std::string& name, std::vector<int64_t> ne,
                                 const std::vector<float>& values) {
  tensor::DType type = TypeForRow(ne[0]);
  int64_t rows = Product(ne) / ne[0];
  int64_t row_bytes = tensor::RowBytes(type, ne[0]);
  std::vector<uint8_t> bytes(rows * row_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    tensor::QuantizeRow(type, values.data() + r * ne[0], bytes.data() + r * row_bytes, ne[0]);
  }
  writer_->AddTensor(name, std::move(ne), type, std::move(bytes));
}

void RandomWeights::Floats(const std::string& name, std::vector<int64_t> ne, float mean,
                           float stddev) {
  std::vector<float> values = Normal(name, Product(ne), mean, stddev);
  writer_->AddTensor(name, std::move(ne), tensor::DType::kF32, FloatBytes(values));
}

void RandomWeights::Uniform(const std::string& name, std::vector<int64_t> ne, float low,
                            float high) {
  uint64_t state = HashName(seed_, name);
  std::vector<float> values(Product(ne));
  for (float& v : values) v = low + (high - low) * static_cast<float>(UnitUniform(&state));
  writer_->AddTensor(name, std::move(ne), tensor::DType::kF32, FloatBytes(values));
}

}  // namespace ds::apps
