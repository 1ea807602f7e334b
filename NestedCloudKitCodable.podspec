# The core, and the simulated server as a subspec for apps' tests: Foundation, plus CloudKit and Core Location on
# Apple platforms. Both compile into the one module CocoaPods makes, so the server's `import NestedCloudKitCodable`
# is its own module there (and its `import NestedCloudKitRules` is skipped, the rules being compiled in), and tests
# `import NestedCloudKitCodable` alone.
# scripts/check-podspec.py checks that the source glob matches the real sources and the version the CHANGELOG.
Pod::Spec.new do |s|
  s.name             = 'NestedCloudKitCodable'
  s.version          = '2.0.0'
  s.summary          = 'Codable object graphs to linked CloudKit records and back.'
  s.description      = <<-DESC
    Encodes Codable values, and every CKCodable value nested in them, into CloudKit records linked by references,
    and decodes whole graphs back, fetching referenced records one level per round trip.
  DESC
  s.homepage         = 'https://github.com/ggirotto/NestedCloudKitCodable'
  s.license          = { :type => 'MIT', :file => 'LICENSE' }
  s.author           = { 'The NestedCloudKitCodable authors' => 'https://github.com/ggirotto/NestedCloudKitCodable' }
  s.source           = { :git => 'https://github.com/ggirotto/NestedCloudKitCodable.git', :tag => s.version.to_s }

  # Swift 6.2 (Xcode 26): the models' protocol refines SendableMetatype. The platforms are Package.swift's.
  s.swift_versions   = ['6.2']
  s.ios.deployment_target      = '17.0'
  s.osx.deployment_target      = '14.0'
  s.tvos.deployment_target     = '17.0'
  s.watchos.deployment_target  = '10.0'
  s.visionos.deployment_target = '1.0'

  # The rules the storing backends share are `package` API, which needs a package name outside SwiftPM.
  s.pod_target_xcconfig = { 'OTHER_SWIFT_FLAGS' => '-package-name NestedCloudKitCodable' }
  s.default_subspecs = 'Core'

  # What an app ships: the coders, the records, the CloudDatabase protocol and CloudKit's bridge.
  s.subspec 'Core' do |core|
    core.source_files = 'Sources/NestedCloudKitCodable/**/*.swift'
    core.frameworks   = 'Foundation', 'CloudKit', 'CoreLocation'
  end

  # InMemoryCloudDatabase, the simulated server, and the rules it applies, for an app's tests:
  # pod 'NestedCloudKitCodable/Server'.
  s.subspec 'Server' do |server|
    server.dependency 'NestedCloudKitCodable/Core'
    server.source_files = 'Sources/{NestedCloudKitRules,NestedCloudKitServer}/**/*.swift'
  end
end
